import Foundation
@testable import PayServiceCore
import PayServiceTestSupport
import Testing

/// The borrowed request path (`RequestHandler.answerBorrowed`) against the general one: for every
/// config in the repository and thousands of generated requests (plain ones, and ones with every
/// kind of irregularity), a request it answers gets exactly the general path's bytes, and a request
/// it declines gets nothing from it.
@Suite("Borrowed request path")
struct BorrowedRequestTests {
  /// Every config the repository ships or tests with that loads on its own.
  static let configPaths: [String] = [
    "config.yaml", "Benchmarks/bench-config.yaml", "examples/uk-vat.yaml", "examples/jp-shop.yaml",
    "examples/cn-shop.yaml", "examples/web/shop.yaml",
  ].map(TestPaths.path)
    + [
      "config.yaml", "discounts/config.yaml", "events/config.yaml", "currency-jpy/config.yaml",
      "currency-kwd-half-even/config.yaml", "delivery-month-end/config.yaml", "delivery-year-end/config.yaml",
      "back-office/config.yaml", "back-office-manual/config.yaml", "payment-request/config.yaml",
      "applepay/config.yaml",
    ].map { TestPaths.path("Tests/EndToEndTests/Golden/\($0)") }

  /// The general path's response line (with its LF), or nil when it answers nothing.
  static func general(_ handler: RequestHandler, _ line: String) -> [UInt8]? {
    var writer = JSONWriter()
    let answered = Array(line.utf8).withUnsafeBytes { handler.answer(handler.parse($0), into: &writer) }
    return answered ? writer.bytes : nil
  }

  /// The borrowed path's response line, or nil when it declines (checking it then wrote nothing).
  static func borrowed(_ handler: RequestHandler, _ line: String) -> [UInt8]? {
    var writer = JSONWriter()
    writer.raw("previous line\n")
    let before = writer.bytes
    let answered = Array(line.utf8).withUnsafeBytes { handler.answerBorrowed($0, into: &writer) }
    guard answered else {
      #expect(writer.bytes == before, "a declined line left output: \(line)")
      return nil
    }
    return Array(writer.bytes.dropFirst(before.count))
  }

  /// A generated request line: mostly what a checkout sends, with irregular forms mixed in.
  static func request(_ config: Config, _ random: inout SplitMix64, irregular: Bool) -> String {
    func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
    func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
    let skus = config.catalog.map(\.sku)
    var items: [String] = []
    for sku in skus.shuffled(using: &random).prefix(1 + Int(random.next() % 3)) {
      var quantity = chance(30) ? "" : ",\"quantity\":\(1 + random.next() % 4)"
      if irregular && chance(10) { quantity = pick([",\"quantity\":2.0", ",\"quantity\":0", ",\"quantity\":10000", ",\"quantity\":\"2\"", ",\"quantity\":1e1", ",\"quantity\":01"]) }
      var skuText = "\"\(sku)\""
      if irregular && chance(5) { skuText = pick(["\"nope\"", "\"\"", "7", "null"]) }
      items.append(chance(50) ? "{\"sku\":\(skuText)\(quantity)}" : "{\(quantity.dropFirst())\(quantity.isEmpty ? "" : ",")\"sku\":\(skuText)}")
    }
    if irregular && chance(5), let first = items.first { items.append(first) }
    var regions = Set(config.tax.rules.map(\.region))
    for method in config.shipping.methods { regions.formUnion((method.regions ?? []) + (method.exceptRegions ?? [])) }
    regions.formUnion(config.shipping.shipsTo)
    regions.formUnion(["US-AK", "FR", "DE-BY"])
    let region = pick(regions.sorted())
    let parts = region.split(separator: "-").map(String.init)
    let prefixes = config.tax.rules.flatMap { $0.postalCodePrefixes ?? [] } + ["", "9"]
    var contact: [String] = []
    if chance(90) { contact.append("\"countryCode\":\"\(irregular && chance(5) ? parts[0].lowercased() : parts[0])\"") }
    if parts.count > 1 && chance(90) { contact.append("\"administrativeArea\":\"\(irregular && chance(5) ? " \(parts[1])" : parts[1])\"") }
    if chance(70) { contact.append("\"postalCode\":\"\(pick(prefixes))\(random.next() % 100)\"") }
    if chance(40) { contact.append("\"locality\":\"\(pick(["Springfield", "München", "東京", "Zürich"]))\"") }
    if chance(20) { contact.append("\"addressLines\":[\"1 Main St\",\"Apt 2\"]") }
    if chance(10) { contact.append("\"givenName\":null") }
    if chance(10) { contact.append("\"phoneticGivenName\":{\"nested\":[1,2.5e3,true,null]}") }
    if irregular && chance(5) { contact.append(pick(["\"locality\":\"Spring\\nfield\"", "\"country\":5", "\"postalCode\":\"\"", "\"countryCode\":\"US-CA\""])) }
    var params: [String] = ["\"items\":[\(items.joined(separator: ","))]"]
    if chance(70) { params.append("\"shippingContact\":{\(contact.shuffled(using: &random).joined(separator: ","))}") }
    if chance(60) {
      let identifiers = config.shipping.methods.map(\.identifier)
      params.append("\"shippingMethod\":\"\(irregular && chance(10) ? "teleport" : identifiers.isEmpty ? "none" : pick(identifiers))\"")
    }
    if chance(10) { params.append("\"couponCode\":null") }
    if chance(5) { params.append("\"paymentMethod\":null") }
    if irregular && chance(10) {
      params.append(pick(["\"couponCode\":\"SAVE10\"", "\"couponCode\":\"\"", "\"extra\":1", "\"items\":[]"]))
    }
    let id = pick(["1", "\"abc\"", "null", "-3", "1.5e2", "\"\(random.next() % 1000)\"", "9007199254740993"])
    var envelope = [
      "\"jsonrpc\":\"2.0\"", "\"id\":\(id)", "\"method\":\"computeSummaryItems\"",
      "\"params\":{\(params.shuffled(using: &random).joined(separator: ","))}",
    ]
    if chance(20) { envelope.shuffle(using: &random) }
    if irregular && chance(10) {
      envelope.append(pick(["\"jsonrpc\":\"2.0\"", "\"extra\":[1,{\"a\":null}]", "\"id\":2"]))
    }
    var line = "{" + envelope.joined(separator: chance(10) ? " , " : ",") + "}"
    if irregular && chance(10) { line = pick([line + " x", line + "\r", " " + line + " ", String(line.dropLast())]) }
    return line
  }

  @Test("every config: what the borrowed path answers is the general path's answer, byte for byte")
  func agreesWithGeneralPath() throws {
    var borrowedPlain = [String: Int]()
    for path in Self.configPaths {
      let config = try ConfigLoader.load(path: path)
      let context = try TestConfig.context(config: config)
      let handler = TestConfig.handler(context)
      var random = SplitMix64(seed: 22)
      var answered = 0
      for index in 0..<1_500 {
        let line = Self.request(config, &random, irregular: index % 3 == 0)
        let expected = Self.general(handler, line)
        guard let borrowed = Self.borrowed(handler, line) else { continue }
        #expect(borrowed == expected, "\(path): \(line)")
        if index % 3 != 0 { answered += 1 }
      }
      borrowedPlain[(path as NSString).lastPathComponent + "@" + ((path as NSString).deletingLastPathComponent as NSString).lastPathComponent] = answered
    }
    // The shops with plain prices (no coupon or card in the request, tax per line, no breakdown)
    // are answered on the borrowed path; the tax-inclusive and billing-plan shops mostly are not.
    #expect(borrowedPlain["bench-config.yaml@Benchmarks", default: 0] > 900)
    #expect(borrowedPlain["config.yaml@Golden", default: 0] > 800)
    #expect(borrowedPlain["config.yaml@discounts", default: 0] > 800)
    #expect(borrowedPlain["uk-vat.yaml@examples", default: -1] == 0)
  }

  @Test("the bench's requests are all answered on the borrowed path")
  func benchRequests() throws {
    let config = try ConfigLoader.load(path: TestPaths.path("Benchmarks/bench-config.yaml"))
    let handler = TestConfig.handler(try TestConfig.context(config: config))
    let line = #"{"jsonrpc":"2.0","id":0,"method":"computeSummaryItems","params":{"items":[{"sku":"lamp","quantity":3},{"sku":"clock","quantity":2},{"sku":"desk","quantity":2}],"shippingContact":{"locality":"New York","administrativeArea":"NY","postalCode":"10001","countryCode":"US"}}}"#
    let expected = #"{"jsonrpc":"2.0","id":0,"result":{"currencyCode":"USD","shippingMethod":"free","summaryItems":[{"label":"Desk Lamp × 3","amount":"59.97","type":"final"},{"label":"Clock × 2","amount":"100.00","type":"final"},{"label":"Desk × 2","amount":"1199.90","type":"final"},{"label":"Shipping","amount":"0.00","type":"final"},{"label":"Tax","amount":"120.69","type":"final"},{"label":"Payservice Bench","amount":"1480.56","type":"final"}]}}"#
    #expect(Self.borrowed(handler, line).map { String(decoding: $0, as: UTF8.self) } == expected + "\n")
  }

  @Test("lines the borrowed path leaves to the general one")
  func declines() throws {
    let handler = TestConfig.handler(try TestConfig.context())
    let items = #""items":[{"sku":"clock"}]"#
    let declined = [
      #"{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{"items":[{"sku":"cl\u006fck"}]}}"#,
      #"{"jsonrpc":"2.0","id":1,"id":2,"method":"computeSummaryItems","params":{\#(items)}}"#,
      #"{"jsonrpc":"2.0","method":"computeSummaryItems","params":{\#(items)}}"#,
      #"{"jsonrpc":"1.0","id":1,"method":"computeSummaryItems","params":{\#(items)}}"#,
      #"{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{\#(items),"couponCode":"SAVE10"}}"#,
      #"{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{"items":[{"sku":"clock","quantity":1.0}]}}"#,
      #"{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{\#(items),"shippingContact":{"countryCode":"us"}}}"#,
      #"{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{\#(items)}} x"#,
      #"[{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{\#(items)}}]"#,
      #"{"jsonrpc":"2.0","id":"\#(String(repeating: "x", count: 70))","method":"computeSummaryItems","params":{\#(items)}}"#,
      #"{"jsonrpc":"2.0","id":1,"method":"listProducts","params":{}}"#,
      #"{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":[]}"#,
      #"{"jsonrpc":"2.0","id":1,"method":"computeSummaryItems","params":{"items":[{"sku":"clock"},{"sku":"clock"}]}}"#,
    ]
    for line in declined {
      #expect(Self.borrowed(handler, line) == nil, "\(line)")
    }
    // Each gets the general path's answer instead (the notification none).
    #expect(declined.filter { Self.general(handler, $0) == nil } == [declined[2]])
  }

  @Test("the scanner's string check matches a byte-by-byte one, and its UTF-8 check Swift's")
  func scannerChecks() {
    var random = SplitMix64(seed: 7)
    let alphabet: [UInt8] = [0x20, 0x41, 0x7A, 0x5C, 0x1F, 0x00, 0x7F, 0x80, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xED, 0xA0, 0xF0, 0x9F, 0x98, 0x80, 0xF4, 0x90, 0xC0, 0xFF]
    for _ in 0..<20_000 {
      let count = Int(random.next() % 24)
      let bytes = (0..<count).map { _ in random.next() % 4 == 0 ? alphabet[Int(random.next() % UInt64(alphabet.count))] : UInt8(0x20 + random.next() % 0x5F) }
      bytes.withUnsafeBytes { text in
        let expected: JSONScanner.Plainness =
          bytes.contains { $0 < 0x20 || $0 == 0x5C } ? .escaped : bytes.allSatisfy { $0 < 0x80 } ? .ascii : .utf8
        #expect(JSONScanner.plainness(text) == expected, "\(bytes)")
        #expect(JSONScanner.isValidUTF8(text) == (String(validating: bytes, as: UTF8.self) != nil), "\(bytes)")
      }
    }
  }

  @Test("the request log line of a borrowed answer has the general path's form")
  func logLine() throws {
    let log = RequestLog(fd: -1, level: .requests)
    let handler = RequestHandler(context: try TestConfig.context(), methods: .payservice(), log: log)
    let line = #"{"jsonrpc":"2.0","id":"a-1","method":"computeSummaryItems","params":{"items":[{"sku":"clock"}]}}"#
    #expect(Self.borrowed(handler, line) != nil)
    let text = String(decoding: log.collected, as: UTF8.self)
    #expect(text.hasPrefix(#"payservice: id="a-1" method="computeSummaryItems" us="#))
    #expect(text.hasSuffix(" outcome=ok\n"))
  }
}
