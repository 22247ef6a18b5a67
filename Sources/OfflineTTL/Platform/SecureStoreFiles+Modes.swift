/// The modes ``SecureStoreFiles`` sets: exact modes for what it creates, whatever the umask, and
/// the owner's bits that the online path gives back to a directory of this user.
extension SecureStoreFiles {
  /// The error for a failed open (or `mkdirat`) of a directory: the wrong type or a link
  /// (`ENOTDIR`, `ELOOP`) as `wrongType(_:in:expectingDirectory:errno:)` finds it, else the
  /// system error.
  func openFailure(_ error: Errno, _ name: String, in parent: StoreDirectory)
    -> StoreFileError
  {
    if error == .notDirectory || error == .tooManySymbolicLinks {
      return wrongType(name, in: parent, expectingDirectory: true, errno: error)
    }
    return StoreFileError(.system(error), path: parent.path(of: name))
  }

  /// Sets the mode of the entry `name` by name, never following a link (`fchmodat` with
  /// `AT_SYMLINK_NOFOLLOW`).
  ///
  /// - Returns: `false` when the platform cannot do it without following (`EOPNOTSUPP`,
  ///   `ENOSYS`): the caller then sets the mode on a descriptor.
  /// - Throws: ``StoreFileError`` for any other failure.
  func setMode(_ mode: UInt32, of name: String, in parent: StoreDirectory)
    throws(StoreFileError) -> Bool
  {
    do {
      try system.fchmodat(parent.fd, name, mode: mode)
      return true
    } catch  where error == .notSupported || error == .notImplemented {
      return false
    } catch {
      throw StoreFileError(.system(error), path: parent.path(of: name))
    }
  }

  /// The online path's repair of a directory it cannot open (`EACCES`): when a directory of
  /// this user that nobody else may write stands under `name`, gives its owner the bits `rwx`
  /// back by name; another user's directory, or one that group or others may write, is
  /// `insecure`, and anything else (or a platform that cannot change a mode by name without
  /// following) is left for the next open to report.
  func restoreOwnerBits(_ name: String, in parent: StoreDirectory)
    throws(StoreFileError)
  {
    let path = parent.path(of: name)
    guard let info = try? system.fstatat(parent.fd, name), info.kind == .directory else {
      return
    }
    try checkOwnership(info, path: path)
    _ = try setMode(info.permissions | 0o700, of: name, in: parent)
  }

  /// The online path's repair of an open directory of this user (already checked): gives its
  /// owner the bits `rwx` back when any is missing (a 0500 directory cannot be written).
  func restoreOwnerBits(_ fd: FileDescriptor, _ info: FileStatus, path: String)
    throws(StoreFileError)
  {
    guard info.permissions & 0o700 != 0o700 else { return }
    do { try system.fchmod(fd, mode: info.permissions | 0o700) } catch {
      throw StoreFileError(.system(error), path: path)
    }
  }
}
