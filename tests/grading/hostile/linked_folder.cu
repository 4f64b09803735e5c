// expect: REJECTED
// reason: symbolic link
// setup: link-to-solutions
//
// The submission folder itself is a symbolic link to the instructor's solutions/ (the test
// makes it; this file's body is not used). Before the fix it was followed, and the instructor's
// reference was graded as the student's work: PASS. A submission folder must be a folder of
// the student's own: every step is REJECTED, with the reason.
