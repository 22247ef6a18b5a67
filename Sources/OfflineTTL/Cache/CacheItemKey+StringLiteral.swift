extension CacheItemKey: ExpressibleByStringLiteral {
  /// A key written in source: `let key: CacheItemKey = "token"`.
  ///
  /// An invalid literal is a programming error and stops the program with the reason (as
  /// `URL(string:)!` or a malformed `Regex` literal would); for text known only at run time use
  /// the throwing ``init(_:)``.
  ///
  /// Swift reads `CacheItemKey("token")` with a string literal as this literal form, not as
  /// ``init(_:)``: it never throws (`try` there only earns a warning, and a `catch` around it
  /// never runs), and an invalid literal stops the program. `try CacheItemKey(text)` with a
  /// `String` value is the throwing initializer.
  ///
  /// - Parameter value: The key's text; must satisfy every rule of ``init(_:)``.
  /// - Complexity: O(n) in the key's length.
  public init(stringLiteral value: String) {
    do {
      try self.init(value)
    } catch {
      fatalError("\(error)")
    }
  }
}
