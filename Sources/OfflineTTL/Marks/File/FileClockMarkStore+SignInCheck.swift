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
