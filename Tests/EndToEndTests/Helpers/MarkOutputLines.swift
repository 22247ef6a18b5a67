/// The lines `offline-ttl mark observe` and `mark reset` print, as the mark end-to-end tests
/// read them.
enum MarkOutputLines {
  /// Parses `mark N generation G` lines, skipping any other line.
  ///
  /// - Parameter text: Standard output of `offline-ttl mark ...`.
  /// - Returns: Each line's mark (in the unit printed) and generation, in order.
  static func parse(_ text: String) -> [(mark: Int64, generation: UInt64)] {
    text.split(separator: "\n").compactMap { line in
      let words = line.split(separator: " ")
      guard words.count == 4, words[0] == "mark", words[2] == "generation",
        let mark = Int64(words[1]), let generation = UInt64(words[3])
      else { return nil }
      return (mark, generation)
    }
  }
}
