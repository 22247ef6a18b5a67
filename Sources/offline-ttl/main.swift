import OfflineTTLCommandLine

// Thin entry point: all parsing and output lives in OfflineTTLCommandLine.
OfflineTTLCommand.main(CommandLine.arguments)
