// libFuzzer's driver entry point (compiler-rt, FuzzerInterface.h / FuzzerDriver.cpp), declared
// for Swift. Linked only by `-sanitize=fuzzer`; referenced only in the fuzz build of
// offline-ttl-fuzz (Scripts/fuzz.sh), so a plain build needs no libFuzzer.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv,
                        int (*UserCb)(const uint8_t *Data, size_t Size));
