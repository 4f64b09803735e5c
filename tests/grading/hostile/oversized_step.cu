// expect: REJECTED
// reason: larger than
// setup: huge
//
// A "step file" of more than 1 MiB (the test pads this one with comment lines): no step is that
// large, and a grader that copies whatever it is given can be made to fill its disk.
#include "vector_add.cuh"
