// expect: REJECTED
// reason: symbolic link
// setup: symlink-solution
//
// The submission's step file is a symbolic link to the instructor's solution (the test makes
// it; this file's body is not used). Copying it would grade the instructor's code as the
// student's: a step file must be a plain file.
