/// `growth`: not built yet.
enum GrowthBenchmark {
  static func run(arguments: [String], json: Bool) throws {
    throw BenchError.failed("'growth' is not built yet")
  }
}
