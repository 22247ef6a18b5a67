// The test doubles (manual clocks, in-memory stores) live in OfflineTTLTestDoubles, which does not
// import a test framework; a test target that imports OfflineTTLTesting gets them too.
@_exported import OfflineTTLTestDoubles
