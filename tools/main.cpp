// PLACEHOLDER CLI
#include <cstdio>
int main() { std::puts("levelhist"); return 0; }
