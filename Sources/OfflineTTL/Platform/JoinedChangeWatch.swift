/// A watch that a store's shared change watch (``SharedStoreWatch``) polls in its own `poll`,
/// so that a check makes one `poll` for both: the sealing key file's watch (`KeyFileWatch`).
///
/// The joined watch runs the `poll` holding its own lock and takes what it found for its two
/// descriptors at once (a change marked for good, input drained), exactly as a `poll` of its own
/// would: a mount-table change is reported to a descriptor once, by the `poll` that sees it,
/// so no other `poll` of the joined watch may fall between that `poll` and the taking.
protocol JoinedChangeWatch: AnyObject, Sendable {
  /// Runs `poll` holding this watch's lock, giving it this watch's change-watch descriptor
  /// (polled for input) and mount table (polled for `POLLPRI`), and takes the `revents` it
  /// returns for them (`POLLNVAL` for both when the `poll` failed). What it found is kept for
  /// the check scope `scope` (``StoreCheckScope``) with the effective user `user` that the
  /// same check read.
  ///
  /// - Returns: What `poll` returned for the store's own descriptors.
  func withJoinedPoll<Found>(
    scope: UInt64, user: UInt32,
    _ poll: (_ watch: FileDescriptor, _ mounts: FileDescriptor) -> (
      found: Found, watch: Int16, mounts: Int16
    )
  ) -> Found
}
