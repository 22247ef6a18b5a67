import OfflineTTL
import Testing

@Suite struct BootClockTests {
  @Test func parsesTheKernelsBootIDTextAndPrintsItBack() throws {
    let text = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\n"
    let id = try #require(BootID(uuidString: text))
    #expect(id.high == 0x0f1e_2d3c_4b5a_6978)
    #expect(id.low == 0x8796_a5b4_c3d2_e1f0)
    #expect(id.description == "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
    #expect(BootID(uuidString: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0") == id)
  }

  @Test(arguments: [
    "", "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f",
    "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0a", "0f1e2d3-c4b5a-6978-8796-a5b4c3d2e1f0",
    "+f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1g0",
    "0f1e2d3c-4b5a 6978-8796-a5b4c3d2e1f0",
  ])
  func rejectsAnythingButTheCanonicalForm(text: String) {
    #expect(BootID(uuidString: text) == nil)
  }

  @Test func noneIsAllZero() {
    #expect(BootID(uuidString: "00000000-0000-0000-0000-000000000000") == BootID.none)
    #expect(BootID.none.description == "00000000-0000-0000-0000-000000000000")
  }
}
