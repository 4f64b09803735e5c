// expect: REJECTED
// reason: inside the course being graded
// setup: inside-course
//
// The submission folder is a folder of the instructor's course (its solutions/: the test
// grades that path; this file's body is not used). Only a folder of the student's own is
// graded: every step is REJECTED, and the reason names no path of the grader's.
