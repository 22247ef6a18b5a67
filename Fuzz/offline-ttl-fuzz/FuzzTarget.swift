import OfflineTTL
import OfflineTTLCommandLine

/// One fuzz target: a name (its corpus is `Fuzz/Corpus/<name>/`) and the entry point it drives.
struct FuzzTarget: Sendable {
  /// The name given in `OFFLINE_TTL_FUZZ_TARGET` or on the replay command line.
  let name: String
  /// Runs one input and returns the promises the decoder broke (empty when all held).
  let run: @Sendable ([UInt8]) -> [String]

  /// Every target, in the order `Scripts/fuzz.sh` runs them.
  static let all: [FuzzTarget] = [
    FuzzTarget(name: "mark-record", run: DecoderFuzzing.markRecord),
    FuzzTarget(name: "cache-index", run: DecoderFuzzing.cacheIndex),
    FuzzTarget(name: "item-header", run: DecoderFuzzing.itemHeader),
    FuzzTarget(name: "sealed-item-header", run: DecoderFuzzing.sealedItemHeader),
    FuzzTarget(name: "batch-line", run: CommandLineFuzzing.batchLine),
    FuzzTarget(name: "duration", run: CommandLineFuzzing.duration),
    FuzzTarget(name: "rfc3339", run: DecoderFuzzing.rfc3339),
  ]

  /// The target named `name`, or `nil`.
  static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}
