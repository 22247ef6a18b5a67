import Foundation
import Synchronization

/// A sealing key kept in a file of its own, outside the store: exactly 32 random bytes, mode
/// 0600 (no group or other bit), owned by the process's effective user, a regular file with one
/// name, reached without following a symbolic link as its last component, in a directory that
/// the effective user owns and that group and others may not write (whoever may write it could
/// replace the key; the sticky bit of a shared directory such as `/tmp` does not prevent that).
///
/// A load from the file checks all of that from two `open`s (the key's directory, then the key
/// inside that open directory with `O_NOFOLLOW | O_NONBLOCK`, so a FIFO in its place cannot
/// make it wait) and two `fstat`s, then reads the 32 bytes: a handful of system calls, no lock,
/// no prompt. The key file is never inside the store directory it seals
/// (``checkKeptOutside(storeDirectory:)``).
///
/// **Kept in memory between loads.** The provider (and every copy of it) remembers the last key
/// it read together with the file's identity as that load's `fstat` saw it: device, inode, kind,
/// owner, mode, size, modification and status-change times, and the effective user. A later
/// load makes one `lstat` of the path (`fstatat` with `AT_SYMLINK_NOFOLLOW`: the same lookup as
/// the open, the last component never followed) and returns the remembered key only when that
/// identity is unchanged; anything else (a link, another file, a rewrite, `chmod`, `chown`,
/// removal) reads and checks the file again, so every refusal above still applies at the next
/// load. A file whose times are less than 2 seconds older than the clock at its load is not
/// remembered (a rewrite within one timestamp tick would keep its times). Where the path allows
/// it (absolute, no link, `.` or `..`, local file systems, Linux), the `lstat` is replaced by one
/// `poll` of a watch set up at the read (`KeyFileWatch`: inotify on the file and every
/// directory above it, and the mount table), which reports every change the `lstat` would see;
/// in a gate's check of a ``DirectoryCacheStore``, that `poll` is the store's own (one `poll`
/// for the store and the key, and the same `geteuid`), so a repeated check loads the key with
/// no system call of its own.
/// The same memory holds
/// the store directories whose placement check passed for that key: the check runs again
/// whenever the key is read from the file. What this changes in the threat model:
/// <doc:ThreatModel#Keys-kept-in-memory>.
///
/// ``loadOrCreateKey()`` creates a missing key, holding an exclusive `flock` of the key's
/// directory: 32 bytes from libsodium's random source written to a new file with no name
/// (`O_TMPFILE`, mode 0600; where that is not supported, a temporary name `.<name>.new-<random>`
/// created with `O_EXCL`), `fsync`ed, then published with `linkat(2)`, which never replaces a key
/// another process published first (that one is then used), and the directory is synced. A
/// creation killed at any point leaves no file, or the whole key under its name and no second
/// name of it; the temporary names that a killed creation of the fallback leaves are removed by
/// the next ``loadOrCreateKey()`` (under the same lock, so never one in use). The key's
/// directory must exist.
public struct FileSealingKeyProvider: SealingKeyProvider {
  /// The key file's path.
  public let path: String
  let system: Syscalls
  /// The key last read from the file, shared by copies of this provider.
  let memory: KeyMemory
  /// How long ``loadOrCreateKey()`` waits for the lock of the key's directory while another
  /// thread or process holds it; past it the call fails with
  /// ``SealingKeyError/Code/lockTimedOut`` (a store reports `lock_timed_out`, and the sign-in
  /// writes nothing). Zero or less: never wait. Default 30 seconds
  /// (``FileClockMarkStore/defaultLockTimeout``). ``loadKey()`` takes no lock.
  public var lockTimeout: Duration = FileClockMarkStore.defaultLockTimeout

  /// Creates a provider; does no I/O.
  ///
  /// - Parameter path: The key file's path. It must not be inside the store directory.
  public init(path: String) {
    self.path = path
    self.system = Syscalls()
    self.memory = KeyMemory(settle: KeyMemory.defaultSettle)
  }

  /// Creates a provider whose system calls consult a fault plan (tests only).
  ///
  /// - Parameters:
  ///   - path: The key file's path.
  ///   - faults: The plan every system call consults.
  ///   - settle: How much older than the clock a key file's times must be for its key to be
  ///     remembered (2 seconds by default; zero lets a test see a fresh key remembered).
  @_spi(Testing)
  public init(path: String, faults: SyscallFaultPlan?, settle: Duration = KeyMemory.defaultSettle) {
    self.path = path
    self.system = Syscalls(faults: faults)
    self.memory = KeyMemory(settle: settle)
  }

  /// `key file <path>`, the path as given.
  public var description: String { "key file \(path)" }

  /// `key file` with one part, the key file's absolute path with its directory resolved as
  /// `realpath(3)` resolves it (symbolic links, `.`, `..` and repeated `/`) and its last name
  /// kept as it is (a load never follows it): `keys/k` (in the working directory),
  /// `<dir>/keys/k`, `<dir>/keys/./k`, `<dir>/keys//k` and a path through a symbolic link to
  /// `keys` name one key. A directory that does not exist now is made absolute lexically (`.`
  /// and empty components removed, each `..` removing the name before it). A path ending in
  /// `/` names no key file (every load refuses it) and keeps its `/`. One directory mounted at
  /// two places has two identities (`realpath(3)` does not see bind mounts).
  ///
  /// - Returns: The identity, resolved now against the working directory.
  /// - Complexity: One `realpath(3)` of the key's directory (one lookup per component), and
  ///   `getcwd(3)` for a relative path.
  public func keyIdentity() -> SealingKeyIdentity {
    let absolute =
      (try? AbsolutePath.resolvingLinks(path, system: system))
      ?? (try? AbsolutePath.lexical(path, system: system)) ?? path
    let slash = path.hasSuffix("/") && !absolute.hasSuffix("/") ? "/" : ""
    return SealingKeyIdentity(kind: "key file", parts: [absolute + slash])
  }

  /// Reads and checks the key file.
  ///
  /// - Returns: The key.
  /// - Throws: ``SealingKeyError``: `key_wrong_owner` or `key_insecure_mode` for the key's
  ///   directory (another user's, or writable by group or others); then for the file
  ///   `key_missing`, `key_symbolic_link`, `key_not_regular_file`, `key_wrong_owner`,
  ///   `key_insecure_mode`, `key_hard_linked`, `key_wrong_size` or `key_io`, checked in that
  ///   order.
  /// - Complexity: O(1): one `poll` of its watch (or, where the path is not watched, one
  ///   `lstat`) while the remembered key's file is unchanged; else open, fstat, one 33-byte read,
  ///   close, and setting up the watch (O(path depth)).
  public func loadKey() throws(SealingKeyError) -> SealingKey {
    if let key = remembered(forStoreAt: nil) { return key }
    return try loadFromFile(placedOutside: nil)
  }

  /// See ``SealingKeyProvider/loadKey(forStoreAt:)``: the remembered key when its file is
  /// unchanged and its placement outside `directory` was checked when it was read; otherwise
  /// ``checkKeptOutside(storeDirectory:)`` and a load from the file.
  ///
  /// - Complexity: One `lstat` while the key file is unchanged; else as the two calls.
  public func loadKey(forStoreAt directory: String) throws(SealingKeyError) -> SealingKey {
    if let key = remembered(forStoreAt: directory) { return key }
    try checkKeptOutside(storeDirectory: directory)
    // Only a pair of absolute paths names the same places whatever the working directory.
    let absolute = directory.hasPrefix("/") && path.hasPrefix("/")
    return try loadFromFile(placedOutside: absolute ? directory : nil)
  }

  /// The remembered key, when the file's identity and the effective user are those of its load
  /// and (for a `directory`) its placement outside that store was checked then.
  private func remembered(forStoreAt directory: String?) -> SealingKey? {
    guard let entry = memory.entry.withLock({ $0 }) else { return nil }
    if let directory, !entry.placedOutside.contains(directory) { return nil }
    if let watch = entry.watch {
      // One `poll` and one `geteuid`, or none when a store's check polled the watch with its
      // own (``KeyFileWatch/withJoinedPoll(scope:user:_:)``).
      guard let user = watch.unchangedUser(), user == entry.user else { return nil }
      return entry.key
    }
    guard let now = try? system.lstat(path), now == entry.status,
      system.effectiveUserID() == entry.user
    else { return nil }
    return entry.key
  }

  /// Reads and checks the file; remembers the key with the identity its `fstat` saw (see the
  /// type's discussion), adding `directory` to the stores it was placed outside of.
  private func loadFromFile(placedOutside directory: String?) throws(SealingKeyError)
    -> SealingKey
  {
    let (key, status, user, watch) = try readFile()
    memory.remember(
      key: key, status: status, user: user, watch: watch, placedOutside: directory,
      remember: memory.isSettled(status))
    return key
  }

  /// Reads and checks the file; for a file whose key will be remembered, sets up the watch
  /// that replaces the `lstat` per load (``KeyFileWatch``; `nil` where it cannot be relied on).
  private func readFile() throws(SealingKeyError) -> (
    SealingKey, FileStatus, UInt32, KeyFileWatch?
  ) {
    // The key's directory first, checked on its descriptor, then the key opened inside that
    // very directory: whoever may write the directory could replace the key.
    let (parent, name) = Self.split(path)
    let directory: FileDescriptor
    do {
      directory = try system.openDirectory(followingLinksIn: parent, [.readOnly, .nonBlocking])
    } catch  where error == .noSuchFileOrDirectory {
      // The directory is what is missing: said so, not as the file's own ENOENT.
      throw SealingKeyError(
        code: .missing, errno: error.rawValue,
        reason: "no key file at \(path): its directory \(parent) does not exist; only an online"
          + " sign-in creates a key, in a directory that exists")
    } catch {
      throw SealingKeyError(
        code: .io, errno: error.rawValue,
        reason: "cannot open the directory of key file \(path): \(error)")
    }
    defer { system.closeIgnoringErrors(directory) }
    try checkDirectory(directory)
    let fd: FileDescriptor
    do {
      // `a/k/` names no file in `a/k`: opened as the path, it is the directory (refused below).
      fd =
        try name.isEmpty
        ? system.open(path, [.readOnly, .nonBlocking])
        : system.openat(directory, name, [.readOnly, .nonBlocking])
    } catch {
      // What stands under the name when it could not be opened for its type (a socket is
      // `ENXIO`): the same `key_not_regular_file` as a FIFO or directory that opens.
      if error != .noSuchFileOrDirectory && error != .tooManySymbolicLinks && !name.isEmpty,
        let info = try? system.fstatat(directory, name),
        info.kind != .regular && info.kind != .symbolicLink
      {
        throw SealingKeyError(
          code: .notRegularFile, errno: error.rawValue,
          reason: "key file \(path) is \(info.kind.phrase), not a regular file")
      }
      throw openFailure(error)
    }
    defer { system.closeIgnoringErrors(fd) }
    do {
      let info = try system.fstat(fd)
      let user = try check(info)
      // One byte more than a key, so a file that grew after fstat is still caught.
      var buffer = [UInt8](repeating: 0, count: SealingKey.byteCount + 1)
      let count = try system.preadAll(fd, into: &buffer, at: 0)
      guard count == SealingKey.byteCount else {
        throw SealingKeyError(
          code: .wrongSize,
          reason: "key file \(path) holds \(count) bytes, not \(SealingKey.byteCount)")
      }
      guard buffer.prefix(SealingKey.byteCount).contains(where: { $0 != 0 }) else {
        throw SealingKeyError(
          code: .weak,
          reason: "key file \(path) holds 32 zero bytes, not a key; remove it and sign in online"
            + " (which makes a random key)")
      }
      let key = try SealingKey(bytes: buffer.prefix(SealingKey.byteCount))
      let watch =
        memory.isSettled(info)
        ? KeyFileWatch.watch(system, key: fd, path: path, status: info) : nil
      return (key, info, user, watch)
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
  /// - Throws: ``SealingKeyError``: any failure of ``loadKey()`` other than `key_missing`,
  ///   `key_io` when the key cannot be created (for example its directory is missing), or
  ///   `key_lock_timed_out` when another holder kept the directory's lock past ``lockTimeout``.
  public func loadOrCreateKey() throws(SealingKeyError) -> SealingKey {
    // Under the lock of the key's directory, which every creation takes too: what a creation
    // killed before it finished left behind is removed, and no creation is in progress.
    try withKeyDirectoryLock { directory throws(SealingKeyError) -> SealingKey in
      removeLeftovers(in: directory)
      do throws(SealingKeyError) {
        return try loadKey()
      } catch  where error.code == .missing {
        try create(in: directory)
        return try loadKey()
      }
    }
  }

  /// The prefix of the temporary names a creation gives a new key before publishing it where
  /// unnamed files are not supported: `.<name>.new-`.
  var temporaryPrefix: String {
    // 16 hexadecimal digits follow; a long key name is cut to keep the whole name within 255
    // bytes (`FileSystemName.bounded`), where the key's own name fits.
    FileSystemName.bounded("." + Self.split(path).name, ".new-", reserving: 16)
  }

  /// Runs `body` with the key's directory open and locked (`flock`, exclusive, waited for at most
  /// ``lockTimeout``; released when it returns).
  private func withKeyDirectoryLock<Result>(
    _ body: (FileDescriptor) throws(SealingKeyError) -> Result
  ) throws(SealingKeyError) -> Result {
    let parent = Self.split(path).directory
    let directory: FileDescriptor
    do throws(Errno) {
      directory = try system.openDirectory(followingLinksIn: parent, .readOnly)
      do throws(Errno) {
        try system.flock(directory, .exclusive, waitingAtMost: lockTimeout)
      } catch {
        system.closeIgnoringErrors(directory)
        throw error
      }
    } catch  where error == .timedOut {
      throw SealingKeyError(
        code: .lockTimedOut,
        reason: "the key file's directory for \(path) stayed locked by another thread or process"
          + " for longer than the lock timeout (\(lockTimeout)); no key was read or created")
    } catch  where error == .noSuchFileOrDirectory {
      // No directory: no key, and none can be made (the load says which).
      return try body(FileDescriptor(rawValue: -1))
    } catch {
      throw SealingKeyError(
        code: .io, errno: error.rawValue,
        reason: "cannot lock the key file's directory for \(path): \(error)")
    }
    defer { system.closeIgnoringErrors(directory) }
    return try body(directory)
  }

  /// Removes the temporary files of creations that were killed before they finished (each a
  /// partly written key, or a second name of the key they published). Only called under the
  /// directory's lock, so none of them belongs to a creation in progress.
  private func removeLeftovers(in directory: FileDescriptor) {
    guard directory.rawValue >= 0, let names = try? system.directoryEntries(directory) else {
      return
    }
    let prefix = temporaryPrefix
    for name in names where name.hasPrefix(prefix) {
      try? system.unlinkat(directory, name)
    }
  }

  /// Refuses a key file inside `directory` (or the directory itself). Two checks: the paths,
  /// with symbolic links in their parents resolved (the message for the usual case, and a store
  /// or key that does not exist yet); then the directories themselves, by device and inode: the
  /// key's directory and each directory above it (opened one `..` at a time, up to the root) is
  /// compared with the opened store directory, so no spelling of either path and no bind mount
  /// (which shows the same directory under another path) hides a key inside the store. A key
  /// file with a second name anywhere (a hard link, inside the store or not) is refused by the
  /// load (`key_hard_linked`): copying the store would copy the key. Nothing is remembered here:
  /// ``loadKey(forStoreAt:)`` skips this check only while the key it remembers is unchanged, so a
  /// symbolic link swapped in that makes the path reach another file is checked again.
  ///
  /// - Parameter directory: The store directory's path.
  /// - Throws: ``SealingKeyError`` with code `key_inside_store`.
  /// - Complexity: One lookup per path component of both paths, and one `open` and `fstat` per
  ///   directory from the key's up to the root.
  public func checkKeptOutside(storeDirectory directory: String) throws(SealingKeyError) {
    let store = resolved(directory)
    let (keyParent, keyName) = Self.split(path)
    let keyDirectory = resolved(keyParent)
    let key = keyDirectory == "/" ? "/" + keyName : keyDirectory + "/" + keyName
    if key == store || key.hasPrefix(store == "/" ? "/" : store + "/")
      || keyDirectoryChainHolds(storeDirectory: directory)
    {
      throw SealingKeyError(
        code: .insideStore,
        reason: "key file \(path) is inside the store directory \(directory) it seals; keep it "
          + "outside, where replacing the store cannot replace the key")
    }
  }

  /// The deepest directory chain ``keyDirectoryChainHolds(storeDirectory:)`` walks.
  static let maximumDirectoryDepth = 4096

  /// Whether the key file's directory, or any directory above it up to the root, is the store
  /// directory (the same device and inode, as `fstat` of the opened directories says). `false`
  /// when the store directory or the key's directory cannot be opened (a store not made yet
  /// holds no key; a missing key directory is reported by the load).
  func keyDirectoryChainHolds(storeDirectory directory: String) -> Bool {
    // `<path>/.`: a symbolic link as the last name is followed here (the store refuses one on
    // its own; the key's directory may be reached through one).
    guard
      let storeFD = try? system.open(
        (directory.isEmpty ? "." : directory) + "/.", [.readOnly, .directory, .nonBlocking])
    else { return false }
    defer { system.closeIgnoringErrors(storeFD) }
    guard let store = try? system.fstat(storeFD) else { return false }
    let parent = Self.split(path).directory
    guard
      var current = try? system.open(
        (parent.isEmpty ? "." : parent) + "/.", [.readOnly, .directory, .nonBlocking])
    else { return false }
    defer { system.closeIgnoringErrors(current) }
    for _ in 0..<Self.maximumDirectoryDepth {
      guard let here = try? system.fstat(current) else { return false }
      if here.device == store.device && here.inode == store.inode { return true }
      guard let up = try? system.openat(current, "..", [.readOnly, .directory, .nonBlocking])
      else { return false }
      guard let above = try? system.fstat(up),
        above.device != here.device || above.inode != here.inode
      else {
        // The root: its `..` is itself.
        system.closeIgnoringErrors(up)
        return false
      }
      system.closeIgnoringErrors(current)
      current = up
    }
    return false
  }

  // MARK: - Private

  /// Refuses a key directory that another user owns or that group or others may write (the
  /// sticky bit does not help: whoever may create names in it may create the key's name before
  /// the first sign-in does): whoever may write it can replace the key. The same check the
  /// stores make of their own directories (`SecureStoreFiles.checkOwnership(_:path:)`).
  ///
  /// - Throws: ``SealingKeyError``: `key_wrong_owner`, `key_insecure_mode` (naming the
  ///   directory), or `key_io` when it cannot be `fstat`ed.
  private func checkDirectory(_ directory: FileDescriptor) throws(SealingKeyError) {
    let name = Self.split(path).directory
    let shown = name.isEmpty ? "." : name
    let info: FileStatus
    do {
      info = try system.fstat(directory)
    } catch {
      throw SealingKeyError(
        code: .io, errno: error.rawValue,
        reason: "cannot read the status of the directory of key file \(path): \(error)")
    }
    do {
      try SecureStoreFiles(system: system).checkOwnership(info, path: shown)
    } catch {
      guard case .insecure(let owner, let permissions, let user) = error.problem else {
        throw SealingKeyError(code: .io, reason: "key file \(path): \(error)")
      }
      guard owner == user else {
        throw SealingKeyError(
          code: .wrongOwner,
          reason: "the directory \(shown) of key file \(path) belongs to user \(owner), not to "
            + "this user (\(user)); whoever owns it can replace the key: keep the key in a "
            + "directory of your own")
      }
      throw SealingKeyError(
        code: .insecureMode,
        reason: "the directory \(shown) of key file \(path) has mode "
          + "0\(String(permissions, radix: 8)); group or others may write it, and so replace "
          + "the key (the sticky bit does not prevent that): keep the key in a directory only "
          + "you may write (chmod go-w)")
    }
  }

  /// Checks the key file's status; returns the effective user it was checked against.
  @discardableResult
  private func check(_ info: FileStatus) throws(SealingKeyError) -> UInt32 {
    guard info.kind == .regular else {
      throw SealingKeyError(
        code: .notRegularFile, reason: "key file \(path) is \(info.kind.phrase), not a regular file"
      )
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
    guard info.linkCount == 1 else {
      throw SealingKeyError(
        code: .hardLinked,
        reason: "key file \(path) has \(info.linkCount) names (a hard link); a second name, "
          + "inside a store or anywhere else, is a copy of the key that goes wherever that "
          + "name goes: remove the other name, or make a new key by signing in online")
    }
    guard info.size == Int64(SealingKey.byteCount) else {
      throw SealingKeyError(
        code: .wrongSize,
        reason: "key file \(path) is \(info.size) bytes, not \(SealingKey.byteCount)")
    }
    return me
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

  /// Creates the key file with 32 new random bytes (mode 0600), under the directory's lock
  /// (``withKeyDirectoryLock(_:)``): written to a file with no name (`O_TMPFILE`), synced, and
  /// published with `linkat`, so a creation killed at any point leaves either no file or the
  /// whole key, and never a second name of it; where unnamed files are not supported, through
  /// a named temporary file (``temporaryPrefix``) that the next online load removes if this one
  /// is killed before it does. `linkat` never replaces a key published first (that one is kept).
  private func create(in directory: FileDescriptor) throws(SealingKeyError) {
    let name = Self.split(path).name
    do throws(Errno) {
      guard directory.rawValue >= 0 else { throw Errno.noSuchFileOrDirectory }
      func write(_ fd: FileDescriptor) throws(Errno) {
        try system.fchmod(fd, mode: 0o600)
        let key = SealingKey.random()
        try key.withUnsafeBytes { raw throws(Errno) in try system.writeAll(fd, raw) }
        try system.fsync(fd)
      }
      if let unnamed = try? system.openUnnamedFile(in: directory, mode: 0o600) {
        defer { system.closeIgnoringErrors(unnamed) }
        try write(unnamed)
        do {
          try system.linkat(unnamed, into: directory, as: name)
        } catch  where error == .fileExists {
          // Another process published its key first: keep it.
        }
      } else {
        let temporary =
          temporaryPrefix + Sodium.randomBytes(8).map { String($0, radix: 16) }.joined()
        let fd = try system.openat(
          directory, temporary, [.writeOnly, .create, .exclusive], mode: 0o600)
        defer { try? system.unlinkat(directory, temporary) }
        do throws(Errno) {
          try write(fd)
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
      }
      try system.fsync(directory)
    } catch {
      throw SealingKeyError(
        code: .io, errno: error.rawValue, reason: "cannot create key file \(path): \(error)")
    }
  }

  /// The key path's directory and last name, split at its last `/`: `("", "k")` for `k`,
  /// `("/", "k")` for `/k`, `("a/k", "")` for `a/k/` (no name: its directory is then looked for,
  /// and no key is ever made beside it). Not Foundation's `deletingLastPathComponent`, which
  /// traps on a path without a `/` with this toolchain's Foundation.
  static func split(_ path: String) -> (directory: String, name: String) {
    guard let slash = path.lastIndex(of: "/") else { return ("", path) }
    let directory = String(path[..<slash])
    return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
  }

  /// `path` absolute with its symbolic links resolved, from the bytes of the working directory
  /// and of the path (a name that is not UTF-8 stays itself: decoded with U+FFFD, two
  /// directories could share one spelling and a key outside the store read as inside it): as
  /// much as exists, `realpath(3)` of the whole path, else of its directory, else lexically.
  private func resolved(_ path: String) -> String {
    let path = path.isEmpty ? "." : path
    if let real = try? system.realPath(path) { return real }
    if let parent = try? AbsolutePath.resolvingLinks(path, system: system) { return parent }
    return (try? AbsolutePath.lexical(path, system: system)) ?? path
  }
}
