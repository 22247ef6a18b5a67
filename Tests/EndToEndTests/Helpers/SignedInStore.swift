import Foundation
import OfflineTTLTesting
import Testing

/// A scratch directory holding a store that one `sign-in` of the built binary made, with the
/// item `token` (`secret-token`): the start of the tests that then run the binary under a
/// limit or a delay.
struct SignedInStore {
  let scratch: TemporaryStoreDirectory
  /// The store directory, `<scratch>/store`.
  let store: String
  let runner: BinaryRunner

  /// Makes the scratch directory and signs in; a failed sign-in is recorded as an issue.
  ///
  /// - Parameter prefix: The scratch directory's name prefix.
  init(prefix: String) throws {
    scratch = try TemporaryStoreDirectory(prefix: prefix)
    store = scratch.appending("store")
    let token = scratch.appending("token.txt")
    try Data("secret-token".utf8).write(to: URL(fileURLWithPath: token))
    runner = try BinaryRunner()
    let signIn = try runner.run(["sign-in", "--store", store, "--put", "token=\(token)"])
    #expect(signIn.exitCode == 0, "\(signIn.standardError)")
  }

  /// Removes the scratch directory.
  func remove() { scratch.remove() }
}
