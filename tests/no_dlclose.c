/* Preloaded into the tests' processes in a HALO_SANITIZE=address build
 * (tests/CMakeLists.txt): dlclose keeps the library mapped. Open MPI unloads
 * its components (mca_*.so) in MPI_Finalize, before LeakSanitizer looks at
 * the heap at exit: what a component still held is then reported as leaked,
 * from "<unknown module>", which no suppression can name. Kept mapped, a
 * component's globals still reach their blocks, and the few real leaks of
 * Open MPI show their library and function, which tests/lsan.supp names.
 * Built without the sanitizer: it is preloaded into uninstrumented programs
 * too (mpirun, the shell, python3, cmake). */
int dlclose(void *handle);

int dlclose(void *handle) {
  (void)handle;
  return 0;
}
