import Foundation
import Testing

@testable import OfflineTTLCommandLine

@Suite struct Base64StreamTests {
  /// Any split of the input into chunks encodes as the whole input does.
  @Test(arguments: [0, 1, 2, 3, 4, 5, 100, 1000, 4097])
  func chunksConcatenateToTheWholeEncoding(_ count: Int) {
    let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7) }
    for chunk in [1, 2, 3, 4, 5, 7, 3 << 10] {
      let encoder = Base64Stream(chunkSize: chunk)
      var text: [UInt8] = []
      var offset = 0
      while offset < bytes.count {
        let end = min(bytes.count, offset + chunk)
        bytes[offset..<end].withUnsafeBytes { piece in
          encoder.encode(piece) { text.append(contentsOf: $0) }
        }
        offset = end
      }
      encoder.finish { text.append(contentsOf: $0) }
      #expect(
        String(decoding: text, as: UTF8.self) == Data(bytes).base64EncodedString(),
        "\(count) bytes in chunks of \(chunk)")
    }
  }
}
