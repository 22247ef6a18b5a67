import Foundation

/// The saved inputs of one fuzz target, `Fuzz/Corpus/<target>/` in this checkout: its starting inputs and
/// every input that once broke a promise.
enum FuzzCorpus {
  /// Each input's file name and bytes, sorted by name; empty when the directory is missing.
  static func inputs(_ target: String) -> [(name: String, bytes: [UInt8])] {
    let directory = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/\(target)")
    let names =
      (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?.sorted() ?? []
    return names.compactMap { name in
      guard
        let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path)
      else { return nil }
      return (name, Array(data))
    }
  }
}
