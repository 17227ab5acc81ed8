// Structure-aware mutation: a line of the input that is JSON is parsed, changed as a tree (numbers
// swapped for boundary values, method and param names and skus swapped in, members and elements
// added, dropped or repeated, a call wrapped in MCP's tools/call) and written back as one line. Byte
// flips rarely turn a quantity of 3 into a 20-digit one or an exponent of Int.min; this does so in
// one step, and the coverage feedback keeps the inputs that reach new code.
import PayServiceCore
import PayServiceFuzzSupport

struct RequestMutator {
  /// Every method the handler serves (the back office's and MCP's too).
  let methods: [String]
  /// Param and member names: those the methods' params schemas name, and MCP's.
  let keys: [String]
  /// String values: the configs' skus, shipping methods, coupons and regions, the schemas' enum
  /// values, and edge cases (amounts, times, sizes).
  let strings: [String]
  /// Each method's example params (`rpc.discover`'s), by method name.
  let exampleParams: [String: [JSONValue]]

  /// Numbers at the edges of the integer and floating-point types, of the params' ranges and of
  /// the JSON grammar.
  static let boundaryNumbers = [
    "0", "-0", "1", "-1", "2", "99", "100", "101", "255", "256", "9999", "10000", "65535", "65536",
    "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296",
    "9007199254740991", "9007199254740992", "9007199254740993", "-9007199254740993",
    "999999999999999999", "1000000000000000000", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
    "1.0", "1.5", "0.5", "2.50e1", "1e0", "1E+2", "1e2", "1e-1", "10e-1", "100e-2", "1e18", "1e19",
    "1e308", "1e309", "1e400", "-1e400", "1e-400", "5e-324", "1.7976931348623157e308",
    "1e9223372036854775807", "1e-9223372036854775808", "1e9223372036854775808", "1e-9223372036854775809",
    // Milliseconds and seconds at the ends of four-digit years (what GeneralizedTime and RFC 3339 hold),
    // and amounts at 10^15 minor units.
    "253402300799999", "253402300800000", "-62135596800000", "-62135596800001", "-377705116800000",
    "253402300799", "253402300800", "1000000000000000", "1000000000000001", "999999999999999",
  ]

  /// Exponents at the edges of Int and of Double.
  static let exponents = [
    "-9223372036854775808", "9223372036854775807", "-9223372036854775809", "9223372036854775808",
    "+9223372036854775807", "-400", "400", "-324", "308", "309", "-19", "19", "-18", "18", "-1", "+1", "0", "-0",
  ]

  static let mantissas = ["1", "0", "-1", "2", "9", "10", "1.0", "2.50", "0.5", "9999", "-0"]

  /// Strings that are edge cases wherever a string goes.
  static let edgeStrings = [
    "", " ", "0", "1", "-1", "0.00", "1.00", "-1.00", "-0.00", "0.001", "1.", ".5", "1e3", "00.10",
    "999999999999999.99", "1000000000000000.00", "92233720368547758.07", "92233720368547758.08",
    "9223372036854775807", "9223372036854775808", "99999999999999999999999999999999999999.99",
    "2026-11-21T12:00:00Z", "2026-11-21T11:59:59.5+01:00", "9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z",
    "2026-02-30T00:00:00Z", "2026-11-21T12:00:00.99999999999999999999Z", "2026-11-21T12:00:00+99:99",
    "-9223372036854775808-01-01T00:00:00Z", "\u{0}", "\u{FFFD}", "é", "\u{1F600}",
    String(repeating: "x", count: 257), String(repeating: "9", count: 400),
  ]

  init(handler: RequestHandler, configs: [Config]) {
    methods = handler.servedMethodNames
    var keys: Set<String> = [
      "jsonrpc", "id", "method", "params", "name", "arguments", "_meta", "protocolVersion", "capabilities",
      "clientInfo", "cursor", "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities",
    ]
    var strings = Set(Self.edgeStrings + MCPEndpoint.allVersions)
    let document = handler.respond(#"{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}"#)
      .flatMap { try? JSONParser.parse($0) }
    if let document { Self.harvest(document, keys: &keys, strings: &strings) }
    for config in configs {
      strings.formUnion(config.catalog.map(\.sku))
      strings.formUnion(config.shipping.methods.map(\.identifier))
      strings.formUnion(config.shipping.shipsTo)
      strings.formUnion(config.coupons.flatMap { [$0.code, $0.code.lowercased()] })
      strings.formUnion(config.merchant.supportedNetworks)
      for rule in config.tax.rules {
        strings.formUnion(rule.region.split(separator: "-").map(String.init))
        strings.formUnion(rule.postalCodePrefixes ?? [])
      }
    }
    var examples: [String: [JSONValue]] = [:]
    for example in MethodExample.all {
      if let params = try? JSONParser.parse(example.params) { examples[example.method, default: []].append(params) }
    }
    // Sorted: the same seed gives the same mutation in every process.
    self.keys = keys.sorted()
    self.strings = strings.sorted()
    self.exampleParams = examples
  }

  /// The member names of the params schemas' `properties` and the strings of their `enum`s.
  static func harvest(_ value: JSONValue, keys: inout Set<String>, strings: inout Set<String>) {
    switch value {
    case .object(let object):
      for (key, member) in object.members {
        if key == "properties", case .object(let properties) = member { keys.formUnion(properties.keys) }
        if key == "enum", case .array(let options) = member {
          for case .string(let option) in options { strings.insert(option) }
        }
        harvest(member, keys: &keys, strings: &strings)
      }
    case .array(let elements):
      for element in elements { harvest(element, keys: &keys, strings: &strings) }
    default: break
    }
  }

  // MARK: The input

  /// A mutation of `input` within `maxSize` bytes: one line that is JSON changed as a tree, and
  /// sometimes the lines around it dropped or the line repeated. Nil when no line is JSON or the
  /// result is too long; the caller then mutates bytes.
  func mutate(_ input: [UInt8], maxSize: Int, using rng: inout SplitMix64) -> [UInt8]? {
    var lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
    let parsed = lines.indices.compactMap { index in (try? JSONParser.parse(lines[index])).map { (index, $0) } }
    guard !parsed.isEmpty else { return nil }
    let (index, tree) = parsed[rng.below(parsed.count)]
    var value = tree
    for _ in 0...rng.below(3) { mutate(&value, using: &rng) }
    var writer = JSONWriter()
    writer.write(value)
    let line = writer.bytes
    switch rng.below(8) {
    case 0: lines = [line]
    case 1: lines[index] = line; lines.insert(line, at: index)
    default: lines[index] = line
    }
    let output = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
    return output.count <= maxSize ? output : nil
  }

  // MARK: The tree

  func mutate(_ value: inout JSONValue, using rng: inout SplitMix64) {
    switch rng.below(16) {
    case 0...3:
      // A number made extreme: most often where a number already is.
      if !change(&value, where: Self.isNumber, using: &rng, { node, rng in node = .number(numberLike(node, using: &rng)) }) {
        _ = change(&value, where: { _ in true }, using: &rng) { node, rng in node = .number(number(using: &rng)) }
      }
    case 4:
      _ = change(&value, where: { _ in true }, using: &rng) { node, rng in node = .number(number(using: &rng)) }
    case 5, 6:
      _ = change(&value, where: Self.isString, using: &rng) { node, rng in node = .string(string(using: &rng)) }
    case 7:
      _ = change(&value, where: Self.isObject, using: &rng) { node, rng in
        guard case .object(var object) = node, !object.members.isEmpty else { return }
        object.members[rng.below(object.members.count)].key = keys[rng.below(keys.count)]
        node = .object(object)
      }
    case 8, 9:
      _ = change(&value, where: Self.isObject, using: &rng) { node, rng in
        guard case .object(var object) = node else { return }
        let member = (key: keys[rng.below(keys.count)], value: scalar(using: &rng))
        object.members.insert(member, at: rng.below(object.members.count + 1))
        node = .object(object)
      }
    case 10:
      _ = change(&value, where: Self.isContainer, using: &rng) { node, rng in removeOrRepeat(&node, using: &rng) }
    case 11:
      _ = change(&value, where: { _ in true }, using: &rng) { node, rng in node = scalar(using: &rng) }
    case 12...14:
      changeRequest(&value, using: &rng)
    default:
      // A subtree copied over another: a cart where a contact was, an item inside an item.
      let subtrees = collect(value)
      let donor = subtrees[rng.below(subtrees.count)]
      _ = change(&value, where: { _ in true }, using: &rng) { node, _ in node = donor }
    }
  }

  /// Changes the request itself: its method (the params kept, or an example's), a call as MCP's
  /// tools/call or back, its id.
  func changeRequest(_ value: inout JSONValue, using rng: inout SplitMix64) {
    guard case .object(var request) = value else {
      if case .array(var batch) = value, !batch.isEmpty {
        let index = rng.below(batch.count)
        changeRequest(&batch[index], using: &rng)
        value = .array(batch)
      }
      return
    }
    func set(_ key: String, _ member: JSONValue?) {
      request.members.removeAll { $0.key == key }
      if let member { request.members.append((key, member)) }
    }
    let method = request["method"].flatMap { if case .string(let name) = $0 { name } else { nil } }
    switch rng.below(5) {
    case 0:
      let name = methods[rng.below(methods.count)]
      set("method", .string(name))
      if let examples = exampleParams[name], rng.below(2) == 0 { set("params", examples[rng.below(examples.count)]) }
    case 1:
      if method == "tools/call", case .object(let call)? = request["params"] {
        set("method", call["name"] ?? .string(methods[rng.below(methods.count)]))
        set("params", call["arguments"])
      } else {
        var call = JSONObject()
        call.members.append(("name", .string(method ?? methods[rng.below(methods.count)])))
        if let params = request["params"] { call.members.append(("arguments", params)) }
        set("method", .string("tools/call"))
        set("params", .object(call))
      }
    case 2:
      set("id", rng.below(3) == 0 ? nil : rng.below(2) == 0 ? .number(number(using: &rng)) : .string(string(using: &rng)))
    default:
      // The params of an example of this method (or of any), then mutated.
      let name = method.flatMap { exampleParams[$0] != nil ? $0 : nil } ?? Array(exampleParams.keys).sorted()[rng.below(exampleParams.count)]
      let examples = exampleParams[name]!
      var params = examples[rng.below(examples.count)]
      mutate(&params, using: &rng)
      set("params", params)
    }
    value = .object(request)
  }

  func removeOrRepeat(_ node: inout JSONValue, using rng: inout SplitMix64) {
    switch node {
    case .array(var elements) where !elements.isEmpty:
      let index = rng.below(elements.count)
      switch rng.below(3) {
      case 0: elements.remove(at: index)
      case 1: elements.insert(elements[index], at: index)
      default: elements += Array(repeating: elements[index], count: 1 + rng.below(100))
      }
      node = .array(elements)
    case .object(var object) where !object.members.isEmpty:
      let index = rng.below(object.members.count)
      if rng.below(2) == 0 { object.members.remove(at: index) } else { object.members.insert(object.members[index], at: index) }
      node = .object(object)
    default: break
    }
  }

  // MARK: Values

  /// A number at an edge: a boundary value, a run of 19 to 400 digits, or an extreme exponent.
  func number(using rng: inout SplitMix64) -> String {
    switch rng.below(4) {
    case 0, 1: return Self.boundaryNumbers[rng.below(Self.boundaryNumbers.count)]
    case 2:
      let sign = rng.below(4) == 0 ? "-" : ""
      let suffix = ["", "", ".0", ".5", "e0", "e-1", "e1"][rng.below(7)]
      return sign + digits(count: 19 + rng.below(382), using: &rng) + suffix
    default:
      return Self.mantissas[rng.below(Self.mantissas.count)] + ["e", "E"][rng.below(2)]
        + Self.exponents[rng.below(Self.exponents.count)]
    }
  }

  /// `node`'s number made extreme: longer, with an exponent or fraction, negated, or replaced.
  func numberLike(_ node: JSONValue, using rng: inout SplitMix64) -> String {
    guard case .number(let text) = node, !text.contains(where: { $0 == "e" || $0 == "E" || $0 == "." }) else {
      return number(using: &rng)
    }
    switch rng.below(5) {
    case 0: return text + digits(count: 1 + rng.below(400), using: &rng, leading: false)
    case 1: return text + ["e", "E"][rng.below(2)] + Self.exponents[rng.below(Self.exponents.count)]
    case 2: return text + [".0", ".00", ".5", "e0", "E+0"][rng.below(5)]
    case 3: return text.hasPrefix("-") ? String(text.dropFirst()) : "-" + text
    default: return number(using: &rng)
    }
  }

  func digits(count: Int, using rng: inout SplitMix64, leading: Bool = true) -> String {
    var text = ""
    text.reserveCapacity(count)
    for position in 0..<count {
      let digit = leading && position == 0 ? 1 + rng.below(9) : rng.below(10)
      text.append(Character(Unicode.Scalar(UInt8(ascii: "0") + UInt8(digit))))
    }
    return text
  }

  func string(using rng: inout SplitMix64) -> String {
    strings[rng.below(strings.count)]
  }

  /// Any kind of value: a number or string at an edge, a name, null, a boolean, an empty container.
  func scalar(using rng: inout SplitMix64) -> JSONValue {
    switch rng.below(8) {
    case 0, 1: return .number(number(using: &rng))
    case 2, 3: return .string(string(using: &rng))
    case 4: return .string(methods[rng.below(methods.count)])
    case 5: return [.null, .bool(true), .bool(false)][rng.below(3)]
    case 6: return .object(JSONObject())
    default: return .array([])
    }
  }

  // MARK: Walking the tree

  static func isNumber(_ value: JSONValue) -> Bool { if case .number = value { true } else { false } }
  static func isString(_ value: JSONValue) -> Bool { if case .string = value { true } else { false } }
  static func isObject(_ value: JSONValue) -> Bool { if case .object = value { true } else { false } }
  static func isContainer(_ value: JSONValue) -> Bool {
    switch value {
    case .object, .array: true
    default: false
    }
  }

  /// Every node of `value`, depth first.
  func collect(_ value: JSONValue) -> [JSONValue] {
    var nodes = [value]
    switch value {
    case .object(let object): for member in object.members { nodes += collect(member.value) }
    case .array(let elements): for element in elements { nodes += collect(element) }
    default: break
    }
    return nodes
  }

  /// Applies `body` to one node of `value` that `accepts`, chosen at random; false when none does.
  func change(
    _ value: inout JSONValue, where accepts: (JSONValue) -> Bool, using rng: inout SplitMix64,
    _ body: (inout JSONValue, inout SplitMix64) -> Void
  ) -> Bool {
    let count = collect(value).count(where: accepts)
    guard count > 0 else { return false }
    var remaining = rng.below(count)
    return visit(&value, accepts, &remaining, &rng, body)
  }

  private func visit(
    _ node: inout JSONValue, _ accepts: (JSONValue) -> Bool, _ remaining: inout Int, _ rng: inout SplitMix64,
    _ body: (inout JSONValue, inout SplitMix64) -> Void
  ) -> Bool {
    if accepts(node) {
      if remaining == 0 {
        body(&node, &rng)
        return true
      }
      remaining -= 1
    }
    switch node {
    case .object(var object):
      for index in object.members.indices {
        if visit(&object.members[index].value, accepts, &remaining, &rng, body) {
          node = .object(object)
          return true
        }
      }
    case .array(var elements):
      for index in elements.indices {
        if visit(&elements[index], accepts, &remaining, &rng, body) {
          node = .array(elements)
          return true
        }
      }
    default: break
    }
    return false
  }
}

extension SplitMix64 {
  /// A number in 0..<bound (bound > 0); the slight modulo bias does not matter here.
  mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
