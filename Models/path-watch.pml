/*
 * The path watch of a store's change watch (Sources/OfflineTTL/Platform/PathWatch.swift,
 * SharedStoreWatch.view): a repeated check trusts, without an lstat of the store path, that the
 * path still names the store directory kept open, while no event of the watches of the
 * directories on the path was read since the path watch checked the path.
 *
 * Checked by Scripts/model-check.sh. The protocol in words: docs/sign-in-protocol.md, section
 * "The path watch".
 *
 * What is modelled
 *   - One name on the store path (any directory from `/` down to the store directory itself:
 *     each is watched and checked the same way) and DIRS directories that can be at that name;
 *     `named` is the one the name names now. The store directory kept open is reached through
 *     directory 0 (the path named it when the store opened it).
 *   - The Mover (another process of any user who may rename there): renames the directory at
 *     the name away and another one in, up to MOVES times, at any instant. Every directory a
 *     rename moves gets IN_MOVE_SELF when it is watched (the kernel queues it during the rename;
 *     renameat2's RENAME_EXCHANGE moves both); `queued` is the inotify queue (one bit: events
 *     are only ever drained whole). A removal (IN_DELETE_SELF) or a mount (the mount table's
 *     POLLPRI, polled in the same poll) is the same step.
 *   - The Neighbour (any process changing an entry in a directory on the path: a `chmod` or
 *     `touch` in /tmp): inotify reports an entry's IN_ATTRIB to the watch of the directory that
 *     holds it too, as an event that names the entry (`noise`). It never moves the path: each
 *     directory the path depends on has a watch of its own, which reports a change of it
 *     without a name.
 *   - The store process: sets up the path watch (PathWatch.arm: opens the directory at the name,
 *     O_PATH, adds a watch of that very inode, then checks that the name still names it and that
 *     it holds the store directory kept open), then makes READS repeated checks, each one poll
 *     under the shared watch's lock (SharedStoreWatch.view): events queued -> drain them; an
 *     event of a watched directory on the path about itself (no name) ends the path watch, one
 *     that names an entry is ignored (StoreChangeWatch.poll: neither a change of the store nor a
 *     move of the path); nothing else queued -> trust the path while the path watch is on (else
 *     the lstat of the path, which looks for itself).
 *
 * Property
 *   W1 a check that trusts the path without an lstat is right: the name names directory 0.
 *   W2 the path watch ends only after a move: neighbours' events alone never end it.
 *
 * Negative models (each must produce a counterexample; Scripts/model-check.sh requires it)
 *   CHECK_BEFORE_WATCH  the path is checked before the watch is added: a rename in between is
 *                       reported to nobody, and the path watch trusts a path that moved.
 *   NO_END              an event of the path does not end the path watch: the drain consumes the
 *                       rename's event, and the next poll, finding nothing, trusts the moved path.
 *   NOISE_ENDS          any event drained ends the path watch: a neighbour's chmod in /tmp ends
 *                       it with no move of the path (W2).
 */

#ifndef DIRS
#define DIRS 2
#endif
#ifndef MOVES
#define MOVES 2
#endif
#ifndef READS
#define READS 2
#endif

byte named = 0;     /* the directory the name names now */
bit watched[DIRS];  /* which directories have a watch (of their inode) */
bit queued = 0;     /* events about a watched directory itself queued on the inotify descriptor */
bit noise = 0;      /* events naming an entry of a watched directory (a neighbour's IN_ATTRIB) */
bit armed = 0;      /* the path watch is on (SharedStoreWatch.State.path != nil) */
byte moves = 0;

/* rename(2) of the directory at the name away, then another one renamed in: each moved
   directory that is watched queues IN_MOVE_SELF, in the rename itself. */
active proctype Mover() {
  byte next;
  do
  :: moves < MOVES ->
     atomic {
       if :: watched[named] -> queued = 1 :: else -> skip fi;
       select(next : 0 .. DIRS - 1);
       named = next;
       if :: watched[named] -> queued = 1 :: else -> skip fi;
       moves++
     }
  :: else -> break
  od
}

/* chmod or touch of an entry in a directory on the path, other than the next directory of the
   path: an event naming the entry, queued on the watch of the directory that holds it. */
active proctype Neighbour() {
  do
  :: noise = 1
  :: break
  od
}

active proctype Store() {
  byte opened;
  byte reads = 0;
  /* PathWatch.arm: openat(parent, name, O_PATH | O_NOFOLLOW | O_DIRECTORY) */
  opened = named;
#ifdef CHECK_BEFORE_WATCH
  /* the fstatat of the name against the directory opened, before the watch */
  if :: named != opened || opened != 0 -> goto checks :: else -> skip fi;
  watched[opened] = 1;            /* inotify_add_watch("/proc/self/fd/N") */
#else
  watched[opened] = 1;            /* inotify_add_watch("/proc/self/fd/N") */
  /* every watch is in place: the name still names the directory watched, and it holds the store
     directory kept open (the last fstatat against the kept directory's device and inode) */
  if :: named != opened || opened != 0 -> goto checks :: else -> skip fi;
#endif
  armed = 1;
checks:
  do
  :: reads < READS ->
     /* SharedStoreWatch.view: one poll under the state lock */
     atomic {
       if
       :: queued || noise ->
          /* StoreChangeWatch.poll drains the queue whole */
#if defined(NOISE_ENDS)
          armed = 0;
#elif !defined(NO_END)
          if :: queued -> armed = 0 :: else -> skip fi;   /* the path watch ends */
#endif
          assert(armed || moves > 0);     /* W2 */
          queued = 0;
          noise = 0
       :: else ->
          if
          :: armed -> assert(named == 0)   /* W1: trusted without an lstat */
          :: else -> skip                  /* the lstat of the path looks for itself */
          fi
       fi
     }
     reads++
  :: else -> break
  od
}
