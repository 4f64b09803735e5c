// expect: REJECTED
// reason: no-foreign-files
//
// Step 1 "solved" by including the instructor's solution of step 2, by the path it has in a
// course copy (lessons/01_vector_add/ -> solutions/01_vector_add/). A grader that resolves the
// include through the instructor's folders says PASS. In the graded copy there is no solutions/
// at all; the include is still REJECTED for what it names (no-foreign-files).
#include "../../solutions/01_vector_add/02_grid_stride_loop.cu"
