import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// A deferred store (the throwaway `:memory:` one) is opened on another thread and prepared once,
/// when a request first needs it; the requests before that never wait for it.
@Suite("Store source")
struct StoreSourceTests {
  @Test("a deferred store is prepared once, at its first use, and then serves every request")
  func deferredStore() throws {
    let config = TestConfig.load()
    let preparations = Counter()
    let source = StoreSource(opening: StoreOpening(path: ":memory:")) { store in
      preparations.increment()
      try store.seedStock(config.catalog)
    }
    let handler = TestConfig.handler(
      ServiceContext(config: config, storeSource: source, clock: ServiceClock(pinned: TestConfig.now)))
    #expect(handler.call("computeSummaryItems", #"{"items":[{"sku":"clock"}]}"#)["result"] != nil)
    #expect(!source.wasUsed)
    #expect(preparations.value == 0)
    let eager = TestConfig.handler(try TestConfig.context())
    #expect(handler.respond(#"{"jsonrpc":"2.0","id":1,"method":"listProducts"}"#)
      == eager.respond(#"{"jsonrpc":"2.0","id":1,"method":"listProducts"}"#))
    #expect(handler.call("listProducts")["result"]?["products"]?[0]?["quantityOnHand"] == .number("10"))
    #expect(source.wasUsed)
    #expect(preparations.value == 1)
  }

  @Test("a deferred store that cannot be opened fails each store request with -32001, and only those")
  func deferredFailure() throws {
    let source = StoreSource(opening: StoreOpening(path: "/nonexistent/dir/store.sqlite")) { _ in
      Issue.record("a store that failed to open is not prepared")
    }
    #expect(throws: StoreError.self) { try source.get() }
    let handler = TestConfig.handler(
      ServiceContext(config: TestConfig.load(), storeSource: source, clock: ServiceClock(pinned: TestConfig.now)),
      backOffice: true)
    #expect(handler.call("listProducts")["error"]?["code"] == .number("-32001"))
    #expect(handler.call("getOrder", #"{"orderId":"ord_x"}"#)["error"]?["code"] == .number("-32001"))
    #expect(handler.call("computeSummaryItems", #"{"items":[{"sku":"clock"}]}"#)["result"] != nil)
  }

  @Test("a preparation that fails leaves the store unavailable, with the reason")
  func preparationFailure() throws {
    struct SeedFailed: Error, CustomStringConvertible { var description: String { "seed failed" } }
    let source = StoreSource(opening: StoreOpening(path: ":memory:")) { _ in throw SeedFailed() }
    for _ in 0..<2 {
      do {
        _ = try source.get()
        Issue.record("expected the preparation's failure")
      } catch {
        #expect("\(error)" == "store unavailable: seed failed")
      }
    }
  }

  final class Counter: @unchecked Sendable {
    private(set) var value = 0
    func increment() { value += 1 }
  }
}
