import Foundation
import Synchronization

/// A sealing key kept in a file of its own, outside the store: exactly 32 random bytes, mode
/// 0600 (no group or other bit), owned by the process's effective user, a regular file reached
/// without following a symbolic link as its last component.
///
/// Every load checks all of that from one `open` (`O_NOFOLLOW | O_NONBLOCK`, so a FIFO in its
/// place cannot make it wait) and one `fstat`, then reads the 32 bytes: a handful of system calls,
/// no lock, no prompt. The key file is never inside the store directory it seals
/// (``checkKeptOutside(storeDirectory:)``).
///
/// ``loadOrCreateKey()`` creates a missing key: 32 bytes from libsodium's random source written
/// to a new temporary file (0600, `O_EXCL`) in the key's directory, `fsync`ed, then published with
/// `link(2)`, which never replaces a key another process published first (that one is then used),
/// and the directory is synced. The key's directory must exist.
public struct FileSealingKeyProvider: SealingKeyProvider {
  /// The key file's path.
  public let path: String
  let system: Syscalls

  /// Creates a provider; does no I/O.
  ///
  /// - Parameter path: The key file's path. It must not be inside the store directory.
  public init(path: String) {
    self.path = path
    self.system = Syscalls()
  }

  /// Creates a provider whose system calls consult a fault plan (tests only).
  @_spi(Testing)
  public init(path: String, faults: SyscallFaultPlan?) {
    self.path = path
    self.system = Syscalls(faults: faults)
  }

  /// `key file <path>`.
  public var description: String { "key file \(path)" }

  /// Reads and checks the key file.
  ///
  /// - Returns: The key.
  /// - Throws: ``SealingKeyError``: `key_missing`, `key_symbolic_link`, `key_not_regular_file`,
  ///   `key_wrong_owner`, `key_insecure_mode`, `key_wrong_size` or `key_io`, checked in that
  ///   order.
  /// - Complexity: O(1): open, fstat, one 33-byte read, close.
  public func loadKey() throws(SealingKeyError) -> SealingKey {
    let fd: FileDescriptor
    do {
      fd = try system.open(path, [.readOnly, .nonBlocking])
    } catch {
      throw openFailure(error)
    }
    defer { system.closeIgnoringErrors(fd) }
    do {
      let info = try system.fstat(fd)
      try check(info)
      // One byte more than a key, so a file that grew after fstat is still caught.
      var buffer = [UInt8](repeating: 0, count: SealingKey.byteCount + 1)
      let count = try system.preadAll(fd, into: &buffer, at: 0)
      guard count == SealingKey.byteCount else {
        throw SealingKeyError(
          code: .wrongSize,
          reason: "key file \(path) holds \(count) bytes, not \(SealingKey.byteCount)")
      }
      return try SealingKey(bytes: buffer.prefix(SealingKey.byteCount))
    } catch let error as SealingKeyError {
      throw error
    } catch let error as Errno {
      throw SealingKeyError(
        code: .io, errno: error.rawValue, reason: "cannot read key file \(path): \(error)")
    } catch {
      throw SealingKeyError(code: .io, reason: "cannot read key file \(path): \(error)")
    }
  }

  /// Reads the key file, or creates it with a new random key when it does not exist.
  ///
  /// - Returns: The key now in the file (another process's, when it created one first).
  /// - Throws: ``SealingKeyError``: any failure of ``loadKey()`` other than `key_missing`, or
  ///   `key_io` when the key cannot be created (for example its directory is missing).
  public func loadOrCreateKey() throws(SealingKeyError) -> SealingKey {
    do {
      return try loadKey()
    } catch  where error.code == .missing {
      try create()
      return try loadKey()
    }
  }

  /// Refuses a key file inside `directory` (or the directory itself), comparing both paths with
  /// symbolic links in their parents resolved.
  ///
  /// A pair of absolute paths that passed is remembered for the life of the process (at most 256
  /// pairs), so a repeated check resolves nothing; a refusal is never remembered.
  ///
  /// - Parameter directory: The store directory's path.
  /// - Throws: ``SealingKeyError`` with code `key_inside_store`.
  /// - Complexity: One lookup per path component of both paths, the first time; O(1) after.
  public func checkKeptOutside(storeDirectory directory: String) throws(SealingKeyError) {
    // Resolving both paths costs more than the rest of a check (a lookup per component through
    // Foundation); a pair of absolute paths that passed is remembered for the process.
    let memo = directory + "\u{0}" + path
    let absolute = directory.hasPrefix("/") && path.hasPrefix("/")
    if absolute, Self.keptOutside.withLock({ $0.contains(memo) }) { return }
    let store = Self.resolved(directory)
    let keyDirectory = Self.resolved((path as NSString).deletingLastPathComponent)
    let key =
      keyDirectory == "/"
      ? "/" + (path as NSString).lastPathComponent
      : keyDirectory + "/" + (path as NSString).lastPathComponent
    if key == store || key.hasPrefix(store == "/" ? "/" : store + "/") {
      throw SealingKeyError(
        code: .insideStore,
        reason: "key file \(path) is inside the store directory \(directory) it seals; keep it "
          + "outside, where replacing the store cannot replace the key")
    }
    if absolute {
      Self.keptOutside.withLock { passed in
        if passed.count >= 256 { passed.removeAll() }
        passed.insert(memo)
      }
    }
  }

  /// Pairs of absolute store and key paths that ``checkKeptOutside(storeDirectory:)`` passed in
  /// this process (at most 256).
  private static let keptOutside = Mutex(Set<String>())

  // MARK: - Private

  private func check(_ info: FileStatus) throws(SealingKeyError) {
    guard info.kind == .regular else {
      throw SealingKeyError(code: .notRegularFile, reason: "key file \(path) is not a regular file")
    }
    let me = system.effectiveUserID()
    guard info.ownerID == me else {
      throw SealingKeyError(
        code: .wrongOwner,
        reason: "key file \(path) belongs to user \(info.ownerID), not to this user (\(me))")
    }
    guard !info.isAccessibleByOthers else {
      throw SealingKeyError(
        code: .insecureMode,
        reason: "key file \(path) has mode 0\(String(info.permissions, radix: 8)); it must be "
          + "0600 (no group or other access)")
    }
    guard info.size == Int64(SealingKey.byteCount) else {
      throw SealingKeyError(
        code: .wrongSize,
        reason: "key file \(path) is \(info.size) bytes, not \(SealingKey.byteCount)")
    }
  }

  private func openFailure(_ error: Errno) -> SealingKeyError {
    switch error {
    case .noSuchFileOrDirectory:
      return SealingKeyError(
        code: .missing, errno: error.rawValue,
        reason: "no key file at \(path); only an online sign-in creates one")
    case .tooManySymbolicLinks:
      return SealingKeyError(
        code: .symbolicLink, errno: error.rawValue,
        reason: "key file \(path) is a symbolic link (never followed)")
    default:
      return SealingKeyError(
        code: .io, errno: error.rawValue, reason: "cannot open key file \(path): \(error)")
    }
  }

  private func create() throws(SealingKeyError) {
    let parent = (path as NSString).deletingLastPathComponent
    let name = (path as NSString).lastPathComponent
    let temporary = ".\(name).new-\(Sodium.randomBytes(8).map { String($0, radix: 16) }.joined())"
    do throws(Errno) {
      let directory = try system.open(parent.isEmpty ? "." : parent, .directory)
      defer { system.closeIgnoringErrors(directory) }
      let fd = try system.openat(
        directory, temporary, [.writeOnly, .create, .exclusive], mode: 0o600)
      var published = false
      defer {
        if !published { try? system.unlinkat(directory, temporary) }
      }
      do throws(Errno) {
        try system.fchmod(fd, mode: 0o600)
        let key = SealingKey.random()
        try key.withUnsafeBytes { raw throws(Errno) in try system.writeAll(fd, raw) }
        try system.fsync(fd)
        system.closeIgnoringErrors(fd)
      } catch {
        system.closeIgnoringErrors(fd)
        throw error
      }
      do {
        try system.linkat(directory, temporary, to: name)
      } catch  where error == .fileExists {
        // Another process published its key first: keep it.
      }
      published = true
      try? system.unlinkat(directory, temporary)
      try system.fsync(directory)
    } catch {
      throw SealingKeyError(
        code: .io, errno: error.rawValue, reason: "cannot create key file \(path): \(error)")
    }
  }

  private static func resolved(_ path: String) -> String {
    let absolute = URL(fileURLWithPath: path.isEmpty ? "." : path).standardizedFileURL
    return absolute.resolvingSymlinksInPath().path
  }
}
