/*
 * The all-or-nothing sign-in of DirectoryCacheStore + FileClockMarkStore.
 *
 * Checked by Scripts/model-check.sh. The protocol in words, with the crash state after each
 * step: docs/sign-in-protocol.md.
 *
 * What is modelled
 *   - The mark record's generation `mgen`: the commit point. Its write is one atomic durable step
 *     here (the torn and lost slot writes of that step are model-checked in mark-protocol.pml).
 *   - The live item set `cache/items/<key>`: `lp[k]` is what a process sees (the directory in
 *     memory), `ld[k]` what survives a power loss (renames become durable with fsync(items/)).
 *     A value is the generation of the sign-in that wrote the item; every sign-in writes every
 *     key, so the item set of generation g is "every key = g", and anything else is a mix.
 *   - The live index `cache/index` with its generation `ig`, and the `pending` marker.
 *   - The staging directory `cache/next-<g>/`, named by the generation it is staged for: present
 *     (`nx`), its index valid (`nv`), its generation (`ng`), which keys are still in it (`ni[k]`),
 *     and whether the staged files were made durable by syncfs (`nd`). A reader that resolved
 *     next-<g> and then finds a staging of another generation has opened another directory
 *     (`ng == og` below); a staging's name is reused only after the stale one was removed.
 *   - SIGNINS concurrent sign-ins, serialized by flock(cache/lock); READERS offline checks that
 *     read the index, observe the mark, resolve the set of the mark's generation, read every item
 *     and validate the generation again; one power loss that may strike between any two steps:
 *     a rename not yet made durable is kept or lost, key by key; staged files not yet synced are
 *     garbage. After it, one more sign-in runs (the recovery: it rolls a committed staging
 *     forward and a stale one back) and the store is read back.
 *
 * Properties (assertions):
 *   S1 a reader never sees a mixed item set;
 *   S2 a fresh decision only pairs a mark with the items of its generation (the pair existed
 *      together);
 *   S3 every sign-in completes or leaves the previous state: after a power loss the store reads
 *      back as generation g with the item set of g, for a g that some sign-in committed (or the
 *      initial 0); without one, the last sign-in's state;
 *   S4 generations only grow, as seen by readers;
 *   S5 staging is bounded: a sign-in finds at most one staging directory, and leaves none.
 *   LTL generations_only_grow: [] (mgen >= last_mgen) ... stated with a ghost updated at each
 *   commit.
 *
 * Switch that makes the negative model (must produce a counterexample):
 *   MARK_FIRST  the sign-in resets the mark (commits) before it stages the items.
 */

#ifndef SIGNINS
#define SIGNINS 2
#endif
#ifndef READERS
#define READERS 1
#endif
#define K 2

byte mgen = 0;
byte lp[K];
byte ld[K];
byte ig = 0;
bit pend = 0;
bit nx = 0;
bit nv = 0;
byte ng = 0;
bit ni[K];
bit nd = 0;
byte lockholder = 0;
bool crashed = false;
byte done = 0;

/* ghosts */
byte max_seen = 0;
byte committed_max = 0;
byte last_mgen = 0;

ltl generations_only_grow { [] (mgen >= last_mgen) }

/* DirectoryCacheStore.commitSignIn: flock(cache/lock, LOCK_EX) */
inline lock() { atomic { lockholder == 0 -> lockholder = _pid } }
inline unlock() { lockholder = 0 }

/* DirectoryCacheStore.rollForward: pending, renames next/items/* -> items/*, fsync(items/),
   the live index with the committed generation, pending removed, then the staging removed
   (its index first). */
inline rollForward(p) {
  pend = 1;
  i = 0;
  do
  :: i < K ->
     d_step { if :: ni[i] -> ni[i] = 0; lp[i] = p :: else -> skip fi; i++ }
  :: else -> break
  od;
  skip;                                              /* fsync(items/) */
  d_step { i = 0; do :: i < K -> ld[i] = lp[i]; i++ :: else -> break od; i = 0 }
  ig = p;
  pend = 0;
  removeStaging()
}

/* DirectoryCacheStore.removeStaging: unlink next/index first (so a half-removed staging is
   never taken for a valid one), then its files, then the directory. */
inline removeStaging() {
  nv = 0;
  d_step { i = 0; do :: i < K -> ni[i] = 0; i++ :: else -> break od; i = 0; nd = 0 }
  d_step { nx = 0; ng = 0 }
}

/* DirectoryCacheStore.stage: mkdir next/, write every item (no sync), write next/index with the
   planned generation and the whole new catalog, one syncfs. */
inline stage(p) {
  assert(nx == 0);                                   /* S5: at most one staging */
  d_step { nx = 1; ng = p; i = 0; do :: i < K -> ni[i] = 1; i++ :: else -> break od; i = 0 }
  nv = 1;
  nd = 1
}

/* FileClockMarkStore.resetAfterOnlineSignIn: the commit point */
inline commitMark(p) {
  d_step {
    assert(p > mgen);
    mgen = p;
    last_mgen = p;
    if :: p > committed_max -> committed_max = p :: else -> skip fi
  }
}

/* OfflineAccessGate.signIn -> DirectoryCacheStore.commitSignIn */
proctype SignIn() {
  byte g; byte p; byte i;
  {
    lock();
    g = mgen;                                        /* the stored generation, under the lock */
    p = g + 1;                                       /* the generation the reset will write */
    if                                               /* reclaim: roll forward or back */
    :: nx && nv && ng <= g -> rollForward(ng)
    :: nx && !(nv && ng <= g) -> removeStaging()
    :: else -> skip
    fi;
#ifdef MARK_FIRST
    commitMark(p);
    stage(p);
#else
    stage(p);
    commitMark(p);
#endif
    rollForward(p);
    assert(nx == 0);                                 /* S5 */
    d_step { done++; unlock() }
  } unless { crashed }
}

/* OfflineAccessGate.checkEligibility + OfflineCacheReader.item(forKey:): the summary from the
   live index (DirectoryCacheStore.summary), the mark observed (FileClockMarkStore.observe), the
   set of the mark's generation resolved (DirectoryCacheStore.summary(forGeneration:)) when the
   index names another, every item read from that set (item(forKey:generation:)), the
   generation validated again after the reads (OfflineCacheReader.isCurrent). When a newer
   sign-in committed meanwhile, the reader judges the new set as a new open would
   (OfflineCacheReader.reopen: checkEligibility again) and reads it: back to the start. Sign-ins
   are finite, so it ends. */
proctype Reader() {
  byte sg; byte gm; byte gm2; byte v[K]; bit overlay; byte og; byte i; byte fl;
  {
    skip;
again:
    skip;
    d_step { fl = max_seen; if :: pend -> sg = 255 :: else -> sg = ig fi }   /* summary */
    gm = mgen;                                                                 /* observe */
    assert(gm >= fl);                                                          /* S4 */
    d_step { if :: gm > max_seen -> max_seen = gm :: else -> skip fi }
    d_step {                         /* next-<gm>/index present and valid: the set of gm */
      overlay = 0;
      if
      :: sg != gm && nx && nv && ng == gm -> overlay = 1; og = gm
      :: else -> skip
      fi
    }
    i = 0;
    do
    :: i < K ->
       d_step {
         if
         :: overlay && nx && ng == og && ni[i] -> v[i] = og   /* next-<og>/items/<key> */
         :: else -> v[i] = lp[i]
         fi;
         i++
       }
    :: else -> break
    od;
    gm2 = mgen;                                                                /* validate */
    if
    :: gm2 == gm ->
       i = 0;
       do
       :: i < K -> assert(v[i] == v[0]); assert(v[i] == gm); i++                /* S1, S2 */
       :: else -> break
       od
    :: else -> goto again                  /* a newer sign-in: judged and read again */
    fi
  } unless { crashed }
}

/* A power loss between any two steps, then the recovery sign-in and a read of the whole store. */
proctype PowerLoss() {
  byte i; byte g; byte p; byte v;
  crashed = true;
  atomic {
    if :: !nd -> nv = 0 :: else -> skip fi;          /* unsynced staging: garbage */
    i = 0;
    do
    :: i < K ->
       if
       :: lp[i] != ld[i] ->
          if
          :: ld[i] = lp[i]                           /* the rename reached the disk */
          :: lp[i] = ld[i]; ni[i] = 1                /* it was lost: the file is back in next/ */
          fi
       :: else -> skip
       fi;
       i++
    :: else -> break
    od;
    lockholder = 0
  }
  /* S3: the store as the next process finds it */
  d_step {
    i = 0;
    do
    :: i < K ->
       if
       :: nx && nv && ng <= mgen && ni[i] -> v = ng
       :: else -> v = lp[i]
       fi;
       assert(v == mgen);
       i++
    :: else -> break
    od;
    assert(mgen <= committed_max)
  }
  /* the recovery: the next sign-in (as SignIn, without a further crash) */
  g = mgen;
  p = g + 1;
  if
  :: nx && nv && ng <= g -> rollForward(ng)
  :: nx && !(nv && ng <= g) -> removeStaging()
  :: else -> skip
  fi;
#ifdef MARK_FIRST
  commitMark(p);
  stage(p);
#else
  stage(p);
  commitMark(p);
#endif
  rollForward(p);
  d_step {
    assert(nx == 0 && pend == 0 && ig == mgen);      /* S5 */
    i = 0;
    do :: i < K -> assert(lp[i] == mgen && ld[i] == mgen); i++ :: else -> break od
  }
}

/* Without a power loss: every sign-in completed, the generation grew by SIGNINS. */
proctype Quiescent() {
  byte i;
  (done == SIGNINS && !crashed) || crashed;
  d_step {
    if
    :: !crashed ->
       assert(mgen == SIGNINS && ig == mgen && nx == 0);
       i = 0;
       do :: i < K -> assert(lp[i] == mgen); i++ :: else -> break od
    :: else -> skip
    fi
  }
}

init {
  byte k;
  atomic {
    k = 0;
    do :: k < SIGNINS -> run SignIn(); k++ :: else -> break od;
    k = 0;
    do :: k < READERS -> run Reader(); k++ :: else -> break od;
    run Quiescent();
    run PowerLoss()
  }
}
