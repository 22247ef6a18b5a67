import Foundation

/// `batch`: placeholder until `offline-ttl evaluate --batch` lands.
enum BatchBenchmark {
  static func run(arguments: [String], json: Bool) throws {
    throw BenchError.failed("'batch' is not built yet")
  }
}
