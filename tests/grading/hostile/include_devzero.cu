// expect: COMPILE_ERROR
//
// Includes an endless file. Outside a sandbox the preprocessor reads zeros until its time (or
// memory) runs out; inside, the build's /dev holds only /dev/null and the include fails at once.
// Either way the build ends within --compile-timeout: the test checks the time as well.
#include "/dev/zero"
#include "vector_add.cuh"
