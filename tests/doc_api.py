#!/usr/bin/env python3
"""The API reference covers the whole public API (issue 45).

Runs Doxygen on docs/Doxyfile (every warning is an error there), then reads
its XML and checks what Doxygen 1.9.4 does not warn about:

  - every public header (include/halo.h, include/halo/*.h) has its @file
    block, with a brief;
  - every function the headers declare, and every function a library exports
    (nm -D --defined-only: libhalo.so; the adapters' own functions in
    libhalo_petsc.so and libhalo_hypre.so), is in the reference with a brief,
    every parameter described (@param) and, unless it returns void, its
    return value (@return);
  - every enumerator and macro the headers define (read from their text, not
    from Doxygen), every type, enumeration and struct field has a brief.

Fails listing what is missing. Exits 77 (ctest's SKIP_RETURN_CODE) when
Doxygen is not installed.

Usage: doc_api.py DOXYGEN SOURCE_DIR OUT_DIR LIBHALO [ADAPTER_LIB=HEADER ...]
  ADAPTER_LIB=HEADER, e.g. /b/libhalo_hypre.so=hypre.h: the library exports
  the functions of include/halo/HEADER (the adapters' headers belong to
  their own libraries, as in tests/exports.sh).
"""
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

# the adapters' libraries also export the functions they interpose (hypre's),
# which their headers describe in prose; these are the adapters' own API
ADAPTER_API = re.compile(r'^(halo_|Halo|PetscDLLibraryRegister_halo_petsc$)')


def text(node):
    return ''.join(node.itertext()).strip() if node is not None else ''


def strip_comments(src):
    src = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), src, flags=re.S)
    return re.sub(r'//[^\n]*', '', src)


def header_names(inc):
    """The functions, enumerators and macros the headers define, from their text."""
    funcs, enums, macros = {}, {}, {}
    headers = ['halo.h'] + sorted('halo/' + f for f in os.listdir(os.path.join(inc, 'halo'))
                                  if f.endswith('.h'))
    for h in headers:
        src = strip_comments(open(os.path.join(inc, h)).read())
        guard = re.search(r'#ifndef\s+(\w+)\s*\n\s*#define\s+\1\b', src)
        for m in re.finditer(r'^\s*#\s*define\s+(\w+)', src, flags=re.M):
            if not guard or m.group(1) != guard.group(1):
                macros[m.group(1)] = h
        for body in re.findall(r'\benum\b[^{;]*\{(.*?)\}', src, flags=re.S):
            for m in re.finditer(r'(?:^|,)\s*([A-Za-z_]\w*)\s*(?==|,|$)', body.strip()):
                enums[m.group(1)] = h
        # a name followed by '(' that begins a declaration at file scope (not a
        # typedef: a function-pointer type's name is followed by ')')
        decls = re.sub(r'^\s*#.*$|\bHALO_EXPORT_(BEGIN|END)\b|\bextern\s+"C"\s*\{', ';', src,
                       flags=re.M)
        for m in re.finditer(r'(?:^|;|\})\s*(?:static\s+inline\s+|PETSC_EXTERN\s+)?(?!typedef\b)'
                             r'(?:const\s+)?[A-Za-z_]\w*(?:\s+|\s*\*\s*)([A-Za-z_]\w*)\s*\(', decls):
            funcs[m.group(1)] = h
    return headers, funcs, enums, macros


def exported(lib):
    out = subprocess.run(['nm', '-D', '--defined-only', lib], check=True, capture_output=True,
                         text=True).stdout
    return {f[2] for f in (l.split() for l in out.splitlines())
            if len(f) == 3 and f[1] in 'TtWi' and f[2] not in ('_init', '_fini')}


def module_api(src_dir):
    """What libhalo exports for its CUDA module only (HALO_MODULE_API in src/): not public."""
    names = set()
    for root, _, files in os.walk(src_dir):
        for f in files:
            if f.endswith('.h'):
                s = open(os.path.join(root, f), errors='replace').read()
                for m in re.finditer(r'^HALO_MODULE_API\s[^;(]*?\b(halo_\w+)\s*[\(\[]', s, flags=re.M):
                    names.add(m.group(1))
    return names


def read_xml(xml_dir):
    """Every documented entity of the reference: kind, name, file, and what is described."""
    index = ET.parse(os.path.join(xml_dir, 'index.xml')).getroot()
    files, members, fields = {}, {}, []
    for c in index.findall('compound'):
        root = ET.parse(os.path.join(xml_dir, c.get('refid') + '.xml')).getroot()
        cd = root.find('compounddef')
        kind, name = cd.get('kind'), text(cd.find('compoundname'))
        if kind == 'file':
            loc = cd.find('location')
            files[loc.get('file') if loc is not None else name] = text(cd.find('briefdescription'))
        elif kind in ('struct', 'union'):
            members[name] = {'kind': kind, 'brief': text(cd.find('briefdescription'))}
        for md in cd.iter('memberdef'):
            mk, mname = md.get('kind'), text(md.find('name'))
            e = {'kind': mk, 'brief': text(md.find('briefdescription')),
                 'file': (md.find('location').get('file') or '')}
            if kind in ('struct', 'union'):
                if mk == 'variable':
                    fields.append((name + '.' + mname, e['brief']))
                continue
            if mk == 'function':
                e['type'] = text(md.find('type'))
                e['params'] = [text(p.find('declname')) for p in md.findall('param')
                               if p.find('declname') is not None]
                described = set()
                for pl in md.iter('parameterlist'):
                    if pl.get('kind') != 'param':
                        continue
                    for item in pl.findall('parameteritem'):
                        if text(item.find('parameterdescription')):
                            described |= {text(n) for n in item.iter('parametername')}
                e['described'] = described
                e['returns'] = any(s.get('kind') == 'return' and text(s)
                                   for s in md.iter('simplesect'))
            if mk == 'enum':
                for ev in md.findall('enumvalue'):
                    members[text(ev.find('name'))] = {'kind': 'enumvalue',
                                                      'brief': text(ev.find('briefdescription'))}
            members[mname] = e
    return files, members, fields


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    doxygen, source, out, libhalo = sys.argv[1:5]
    adapters = [a.split('=', 1) for a in sys.argv[5:]]
    if not (os.path.isfile(doxygen) or shutil.which(doxygen)):
        print('doxygen is not installed (apt-get install doxygen): skipped')
        return 77
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, HALO_DOC_OUTPUT=out, HALO_VERSION='')
    run = subprocess.run([doxygen, os.path.join(source, 'docs', 'Doxyfile')], cwd=source, env=env,
                         capture_output=True, text=True)
    if run.returncode != 0 or run.stderr.strip():
        print('doxygen failed (every warning is an error):')
        print((run.stdout + run.stderr).strip())
        return 1

    inc = os.path.join(source, 'include')
    headers, funcs, enums, macros = header_names(inc)
    files, members, fields = read_xml(os.path.join(out, 'xml'))
    missing = []

    for h in headers:  # the Doxyfile strips include/ from the files' paths
        if not files.get(h):
            missing.append(f'{h}: no @file block with a brief')

    def check_function(name, where):
        e = members.get(name)
        if not e or e['kind'] != 'function':
            missing.append(f'{where}: function {name} is not in the reference')
            return
        if not e['brief']:
            missing.append(f'{where}: function {name} has no brief')
        for p in e['params']:
            if p not in e['described']:
                missing.append(f'{where}: parameter {p} of {name} is not described (@param)')
        rtype = re.sub(r'\b(static|inline|extern)\b', '', e['type']).strip()
        if rtype != 'void' and not e['returns']:
            missing.append(f'{where}: return value of {name} is not described (@return)')

    for name, h in sorted(funcs.items()):
        check_function(name, h)
    internal = module_api(os.path.join(source, 'src'))
    for name in sorted(exported(libhalo) - internal - set(funcs)):
        check_function(name, os.path.basename(libhalo))
    for lib, header in adapters:
        if not os.path.isfile(lib):
            missing.append(f'{lib}: no such library')
            continue
        own = {n for n in exported(lib) if ADAPTER_API.match(n)}
        for name in sorted(own):
            if funcs.get(name) != 'halo/' + header:
                missing.append(f'{os.path.basename(lib)}: exports {name}, which halo/{header} '
                               'does not declare')
            check_function(name, os.path.basename(lib))

    for what, names in (('enumerator', enums), ('macro', macros)):
        for name, h in sorted(names.items()):
            e = members.get(name)
            if not e:
                missing.append(f'{h}: {what} {name} is not in the reference')
            elif not e['brief']:
                missing.append(f'{h}: {what} {name} has no brief')
    for name, e in sorted(members.items()):
        if e['kind'] in ('typedef', 'enum', 'struct', 'union', 'variable') and not e['brief'] \
                and not name.startswith('@'):
            missing.append(f'{e["kind"]} {name} has no brief')
    for name, brief in fields:
        if not brief:
            missing.append(f'field {name} has no brief')

    if missing:
        print(f'{len(missing)} gaps in the API reference:')
        print('\n'.join('  ' + m for m in missing))
        return 1
    n_enum = sum(1 for e in members.values() if e['kind'] == 'enumvalue')
    print(f'doc_api: {len(headers)} headers, {len(funcs)} functions, {n_enum} enumerators, '
          f'{len(macros)} macros, {len(fields)} fields documented')
    return 0


if __name__ == '__main__':
    sys.exit(main())
