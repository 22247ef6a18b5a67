/// The shared staging helpers on the raw descriptor of `cache/` that the sealed store's code
/// holds (``RawCacheFiles``): the same secure operations, their refusals given as an errno.
extension DirectoryCacheStore {
  /// `cache/` (already opened by the secure open) as the secure open's type; not closed here.
  func cacheDirectory(_ cache: FileDescriptor) -> StoreDirectory {
    StoreDirectory(
      fd: cache, path: StoreDirectory(fd: cache, path: directory).path(of: Self.cacheName))
  }

  func stagings(_ cache: FileDescriptor) throws(Errno) -> [(name: String, generation: UInt64)] {
    do {
      return try stagings(cacheDirectory(cache))
    } catch {
      throw error.asErrno
    }
  }

  func itemsStamp(_ cache: FileDescriptor) throws(Errno) -> DirectoryStamp {
    do {
      return try itemsStamp(cacheDirectory(cache))
    } catch {
      throw error.asErrno
    }
  }
}

extension StoreFileError {
  /// The errno of a failed call, or for a refusal: `EACCES` (insecure), `ENOTDIR` (wrong type),
  /// `EFBIG` (oversized).
  var asErrno: Errno {
    switch problem {
    case .system(let errno): errno
    case .insecure: .permissionDenied
    case .symbolicLink, .notRegularFile, .notDirectory: .notDirectory
    case .oversized: .fileTooLarge
    }
  }
}
