import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// A method declared store-free runs beside store work on the server's second thread, so it must
/// never reach the store. Every request of the golden transcripts, the documented examples and the
/// fuzz seeds whose method (or MCP tool) is declared store-free is answered here through a store
/// that records being asked for: any such request that asks fails the test, naming the method.
@Suite("Store declarations")
struct StoreDeclarationTests {
  static let goldenRoot = TestPaths.packageRoot.appendingPathComponent("Tests/EndToEndTests/Golden")

  /// Every request line of the golden transcripts, with the config its case runs with.
  static func goldenRequests() throws -> [(config: String, line: String)] {
    let cases = try FileManager.default.contentsOfDirectory(atPath: goldenRoot.path).sorted()
    var requests: [(String, String)] = []
    for name in cases {
      let folder = goldenRoot.appendingPathComponent(name)
      guard let text = try? String(contentsOf: folder.appendingPathComponent("requests.jsonl"), encoding: .utf8) else {
        continue
      }
      let caseConfig = folder.appendingPathComponent("config.yaml").path
      let config =
        FileManager.default.fileExists(atPath: caseConfig) ? caseConfig : goldenRoot.appendingPathComponent("config.yaml").path
      requests += text.split(separator: "\n").map { (config, String($0)) }
    }
    return requests
  }

  /// The requests of a line (one, or a batch's), parsed; nothing for a line that is not JSON.
  static func requests(of line: String) -> [JSONObject] {
    switch try? JSONParser.parse(line) {
    case .object(let object)?: return [object]
    case .array(let elements)?: return elements.compactMap { if case .object(let object) = $0 { return object } else { return nil } }
    default: return []
    }
  }

  @Test("no request of a method (or MCP tool) declared store-free asks for the store")
  func storeFreeNeverAsks() throws {
    var configs: [String: Config] = [:]
    let table = MethodTable.payservice(backOffice: true)
    var examples = try Self.goldenRequests()
    let defaultConfig = Self.goldenRoot.appendingPathComponent("config.yaml").path
    for example in MethodExample.all {
      examples.append(
        (defaultConfig, #"{"jsonrpc":"2.0","id":1,"method":"\#(example.method)","params":\#(example.params)}"#))
    }
    var checked: [String: Int] = [:]
    for (configPath, line) in examples {
      for request in Self.requests(of: line) {
        guard case .string(let method)? = request["method"], let entry = table[method] else { continue }
        guard !entry.usesStore(request["params"]) else { continue }
        let config = try configs[configPath] ?? ConfigLoader.load(path: configPath)
        configs[configPath] = config
        let source = StoreSource(
          opening: StoreOpening(deferred: true) { () throws(StoreError) -> any Store in
            try SQLiteStore(path: ":memory:", newIdentifierKey: TestConfig.identifierKey)
          },
          prepare: { _ in })
        let context = ServiceContext(config: config, storeSource: source, clock: ServiceClock(pinned: TestConfig.now))
        let handler = RequestHandler(context: context, methods: table, log: RequestLog(level: .quiet))
        _ = handler.handle(line: Array(JSONWriter.string(JSONValue.object(request)).utf8))
        #expect(!source.wasUsed, "\(method) is declared store-free but asked for the store answering \(line)")
        checked[method, default: 0] += 1
      }
    }
    // The store-free methods each ran at least once: the check above covered them.
    let storeFree = MethodRegistry.methods(backOffice: true).filter { method in
      !method.tableEntry.usesStore(nil)
    }.map { method in method.name }
    #expect(
      Set(storeFree)
        == [
          "createPaymentRequest", "startMerchantSession", "computeSummaryItems", "selectShippingContact",
          "selectShippingMethod", "selectPaymentMethod", "changeCouponCode", "listShippingMethods",
        ])
    for method in storeFree + ["rpc.discover", "initialize", "tools/list", "tools/call"] {
      #expect(checked[method, default: 0] > 0, "no request of \(method) was checked")
    }
  }

  @Test("an entry or method that does not declare is taken to use the store")
  func undeclaredUsesStore() {
    #expect(Undeclared.usesStore)
    #expect(Undeclared.tableEntry.usesStore(nil))
    #expect(MethodTable.Entry { _, _, _ in SerializedJSON(JSONValue.null) }.usesStore(nil))
  }
}

/// A method that says nothing about the store.
private enum Undeclared: RPCMethod {
  static let name = "undeclared"
  static let documentation = MethodDocumentation(summary: "s", description: "d", readOnly: true, idempotent: true)
  struct Params: Sendable {}
  static let params = ObjectShape<Params>(blank: { Params() }, [])
  static func run(_ params: Params, context: ServiceContext) throws -> ListShippingMethods.Result {
    ListShippingMethods.Result()
  }
}
