// The text histogram of 004_2fb0b8b1ce817291.txt (Kirk & Hwu, PMPP ch. 9):
// letters a-z in groups of four, 7 bins (a-d, e-h, ..., y-z). Reads stdin or a file.
// PLACEHOLDER
int main() { return 0; }
