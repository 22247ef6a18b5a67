/// What ``SecureStoreFiles`` removes (online path only): whatever stands under a name, never
/// followed, and the check that refuses a directory the online path cannot repair.
extension SecureStoreFiles {
  /// Removes whatever stands under `name` (a file, a link, a FIFO, or a directory tree up to
  /// ``maximumRemovalDepth`` levels deep); a missing name is not an error. Links are removed,
  /// never followed. Only the online path calls this.
  ///
  /// - Parameters:
  ///   - name: The name in `parent`.
  ///   - parent: An open directory of the store.
  /// - Throws: ``StoreFileError``.
  /// - Complexity: O(entries in the tree).
  public func removeEntry(_ name: String, in parent: StoreDirectory) throws(StoreFileError) {
    try removeEntry(name, in: parent, depth: 0)
  }

  private func removeEntry(_ name: String, in parent: StoreDirectory, depth: Int)
    throws(StoreFileError)
  {
    let path = parent.path(of: name)
    guard let info = try statusIfPresent(name, in: parent) else { return }
    do {
      guard info.kind == .directory else {
        try system.unlinkat(parent.fd, name)
        return
      }
      guard depth < Self.maximumRemovalDepth else {
        throw StoreFileError(.system(.invalidArgument), path: path)
      }
      let fd = try system.openat(parent.fd, name, [.readOnly, .directory, .nonBlocking])
      let directory = StoreDirectory(fd: fd, path: path)
      defer { close(directory) }
      let names: [String]
      do { names = try system.directoryEntries(fd) } catch {
        throw StoreFileError(.system(error), path: path)
      }
      for entry in names { try removeEntry(entry, in: directory, depth: depth + 1) }
      try system.removeDirectoryAt(parent.fd, name)
    } catch let error as StoreFileError {
      throw error
    } catch let error as Errno {
      throw StoreFileError(.system(error), path: path)
    } catch {
      throw StoreFileError(.system(.ioError), path: path)
    }
  }

  /// Refuses, before an online path writes anything, a directory of the store that it could not
  /// repair: when a directory stands under `name` (never followed), it must be owned by the
  /// effective user and not writable by group or others. A missing name, or anything else under
  /// it (a file, a FIFO, a link: the online path replaces it), passes; so nothing is read, and
  /// nothing waits.
  ///
  /// - Parameters:
  ///   - name: The directory's name in `parent` (`items`, `tmp`).
  ///   - parent: An open directory of the store.
  /// - Throws: ``StoreFileError/Problem/insecure(ownerID:permissions:effectiveUserID:)`` naming
  ///   the path, or a `system` error of `fstatat` other than `ENOENT`.
  /// - Complexity: O(1): one `fstatat`.
  public func refuseInsecureDirectory(_ name: String, in parent: StoreDirectory)
    throws(StoreFileError)
  {
    guard let info = try statusIfPresent(name, in: parent), info.kind == .directory else { return }
    try checkOwnership(info, path: parent.path(of: name))
  }

  /// `fstatat` of `name` in `parent`, never following a link; `nil` when nothing stands there.
  ///
  /// - Throws: ``StoreFileError`` with the `system` error of `fstatat` other than `ENOENT`.
  /// - Complexity: O(1): one `fstatat`.
  private func statusIfPresent(_ name: String, in parent: StoreDirectory) throws(StoreFileError)
    -> FileStatus?
  {
    do {
      return try system.fstatat(parent.fd, name)
    } catch  where error == .noSuchFileOrDirectory {
      return nil
    } catch {
      throw StoreFileError(.system(error), path: parent.path(of: name))
    }
  }
}
