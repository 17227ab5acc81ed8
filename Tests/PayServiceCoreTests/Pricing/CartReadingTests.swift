import PayServiceCore
import PayServiceTestSupport
import Testing

@Suite("Reading a cart")
struct CartReadingTests {
  @Test("a repeated sku is reported even when its first entry has a problem of its own")
  func repeatedAfterInvalid() throws {
    let handler = TestConfig.handler(try TestConfig.context())
    let response = handler.call(
      "computeSummaryItems", #"{"items":[{"sku":"clock","quantity":0},{"sku":"ghost"},{"sku":"clock"},{"sku":"lamp"},{"sku":"lamp","quantity":2}]}"#)
    #expect(
      response["error"]?["data"]?.compact
        == #"{"errors":[{"path":"items[0].quantity","message":"must be an integer from 1 to 9999, got 0"},{"path":"items[1].sku","message":"unknown sku \"ghost\"; listProducts shows the catalog"},{"path":"items[2].sku","message":"sku \"clock\" appears more than once; give it once with the total quantity"},{"path":"items[4].sku","message":"sku \"lamp\" appears more than once; give it once with the total quantity"}]}"#)
  }
}
