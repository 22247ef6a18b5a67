/// `peer`: not built yet.
enum PeerBenchmark {
  static func run(arguments: [String], json: Bool) throws {
    throw BenchError.failed("'peer' is not built yet")
  }
}
