extension FileClockMarkStore {
  /// See ``ClockMarkStore/checkBeforeOnlineSignIn()``: opens the store directory and
  /// `clock-mark.lock` the way the reset does (non-blocking, never following a link, checked on
  /// the descriptor), takes no lock and writes nothing. A store directory or lock file of
  /// another user, or one that group or others may write, is `insecure_store`: the reset never
  /// repairs it, so a sign-in refuses before it stages anything. A missing directory or lock
  /// file, one of the wrong type, or a lock file with another name (the reset replaces it)
  /// passes, as does any other failure (the reset reports it under the lock).
  ///
  /// - Throws: ``StoreError``: `insecure_store` naming the path.
  /// - Complexity: O(1): three opens and `fstat`s.
  public func checkBeforeOnlineSignIn() throws(StoreError) {
    let directory: StoreDirectory
    do {
      directory = try secure.openDirectory(atPath: directoryPath, creating: false)
    } catch  where error.isInsecure {
      throw insecure(error)
    } catch {
      return
    }
    defer { secure.close(directory) }
    do {
      let lock = try secure.openFile(Self.lockFileName, in: directory, .readOnly)
      system.closeIgnoringErrors(lock.fd)
    } catch  where error.isInsecure && !error.isHardLinked {
      throw insecure(error)
    } catch {
      // Missing, of the wrong type, or with another name: the reset replaces it.
    }
  }
}

extension FileClockMarkStore {
  /// The generation this store's reset would write now
  /// (`ClockMarkStorage.signInGeneration(in:forWriting:)`), read under the shared lock the
  /// way the reset reads (a record with another name is read, as the reset reads it to replace
  /// it). A sealed sign-in, which holds the cache's writer lock (so no other reset runs until
  /// its own), stages for this generation: over a record its key cannot authenticate (sealed
  /// with another key, unsealed, altered) the reset continues from the salvaged generation, and
  /// the staging must be of exactly the generation the reset commits, or no reader finds it.
  ///
  /// - Returns: The generation; 1 when there is no store directory or record.
  /// - Throws: ``StoreError``: `lock_timed_out`, or what opening the store directory or its lock
  ///   file throws (the caller then plans as before, and the roll forward binds the live index
  ///   to the generation the reset wrote).
  /// - Complexity: One `flock` and one read of the record (two when it does not load).
  func generationOfNextSignIn() throws(StoreError) -> UInt64 {
    do {
      return try withLockedDirectory(creating: false, lock: .shared) {
        directory throws(StoreError) in
        var access = Access(directory: directory, loaded: nil, creatingKey: true)
        defer { if let loaded = access.loaded { system.closeIgnoringErrors(loaded.fd) } }
        return try signInGeneration(in: &access, forWriting: false).generation
      }
    } catch  where error.code == .absent {
      return 1
    }
  }
}
