// An empty program: built twice by bench/CMakeLists.txt, once linked to libkjit and once not,
// so that bench_startup can time what loading libkjit adds to a process's start.
int main() { return 0; }
