/// The error of a ``ClockMarkStore``: the one ``StoreError`` (an earlier name, kept so that code
/// written against it compiles unchanged).
public typealias ClockMarkStoreError = StoreError

/// The error of a ``CacheItemStore``: the one ``StoreError`` (an earlier name, kept so that code
/// written against it compiles unchanged).
public typealias CacheStoreError = StoreError

extension StoreError {
  /// Creates an error, with the message under its earlier label `reason`.
  ///
  /// - Parameters:
  ///   - code: The kind of failure.
  ///   - unreadableReason: For ``Code/unreadable``, why.
  ///   - key: The cache item concerned, if any.
  ///   - errno: The operating system's error number, if any.
  ///   - unusableReason: Why an outside service could not be used, if that is the cause.
  ///   - reason: A sentence for people (``message``).
  public init(
    code: Code, unreadableReason: UnreadableReason? = nil, key: CacheItemKey? = nil,
    errno: Int32? = nil, unusableReason: StoreUnusableReason? = nil, reason: String
  ) {
    self.init(
      code: code, unreadableReason: unreadableReason, key: key, errno: errno,
      unusableReason: unusableReason, message: reason)
  }

  /// ``message``, under its earlier name.
  public var reason: String { message }
}
