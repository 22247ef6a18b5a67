import OfflineTTLCommandLine

// Thin entry point: all parsing and output lives in OfflineTTLCommandLine. The arguments come
// from ProcessArguments, which survives libfaketime (CommandLine.arguments is empty under it).
OfflineTTLCommand.main(ProcessArguments.current())
