import Foundation
import PayServiceTestSupport
import Testing

@testable import PayServiceCore

/// PlainYAML is a fast path: wherever it composes a tree, it must be libyaml's tree, and
/// composing through it must give libyaml's answer, errors included.
@Suite("Plain YAML fast path")
struct PlainYAMLTests {
  static let configs = [
    "config.yaml", "Benchmarks/bench-config.yaml", "examples/uk-vat.yaml", "examples/jp-shop.yaml",
    "examples/cn-shop.yaml", "examples/web/shop.yaml", "docs/protocol/configs/kwd.yaml",
    "docs/protocol/configs/credit-only.yaml", "docs/protocol/configs/stripe.yaml",
    "docs/protocol/configs/halfeven.yaml", "docs/protocol/configs/broken.yaml", "docs/protocol/configs/jpy.yaml",
    "docs/protocol/configs/stripe-secret.yaml", "Tests/EndToEndTests/Golden/config.yaml",
    "Tests/EndToEndTests/Golden/discounts/config.yaml", "Tests/EndToEndTests/Golden/applepay/config.yaml",
    "Tests/EndToEndTests/Golden/back-office/config.yaml", "Tests/EndToEndTests/Golden/currency-jpy/config.yaml",
    "Tests/EndToEndTests/Golden/currency-kwd-half-even/config.yaml",
    "Tests/EndToEndTests/Golden/payment-request/config.yaml", "Tests/EndToEndTests/Golden/events/config.yaml",
  ]

  static func text(_ relative: String) throws -> String {
    try String(contentsOfFile: TestPaths.path(relative), encoding: .utf8)
  }

  /// The same tree: kinds, texts, styles, marks and order.
  static func same(_ a: YAMLNode, _ b: YAMLNode) -> Bool {
    switch (a, b) {
    case (.scalar(let x), .scalar(let y)):
      return x.string == y.string && x.style == y.style && x.mark == y.mark
    case (.sequence(let x), .sequence(let y)):
      return x.mark == y.mark && x.nodes.count == y.nodes.count && zip(x.nodes, y.nodes).allSatisfy { same($0, $1) }
    case (.mapping(let x), .mapping(let y)):
      return x.mark == y.mark && x.pairs.count == y.pairs.count
        && zip(x.pairs, y.pairs).allSatisfy { same($0.key, $1.key) && same($0.value, $1.value) }
    default:
      return false
    }
  }

  /// Composing `text` through the fast path answers as libyaml does; returns whether the fast
  /// path composed it.
  @discardableResult
  static func check(_ text: String, _ label: String) -> Bool {
    let library = Result { () throws(YAMLSyntaxError) in try YAMLNode.composeWithLibYAML(text) }
    let both = Result { () throws(YAMLSyntaxError) in try YAMLNode.compose(text) }
    let plain = YAMLNode.composePlain(text)
    switch (library, both) {
    case (.success(let x?), .success(let y?)):
      #expect(same(x, y), "\(label): the trees differ")
    case (.success(nil), .success(nil)):
      break
    case (.failure(let x), .failure(let y)):
      #expect(x == y, "\(label): \(x) against \(y)")
    default:
      Issue.record("\(label): libyaml \(library) against \(both)")
    }
    if let plain {
      // What the fast path composes, libyaml composes too (repeated keys aside, which both
      // refuse the same way afterwards).
      if case .success(let tree?) = library { #expect(same(tree, plain), "\(label): the plain tree differs") }
      if case .failure(let error) = library {
        #expect(error.message.hasPrefix("duplicate key"), "\(label): plain composed what libyaml refuses: \(error)")
      }
    }
    return plain != nil
  }

  @Test("the project's configs compose on the fast path to libyaml's trees")
  func projectConfigs() throws {
    var plain: [String] = []
    for config in Self.configs where Self.check(try Self.text(config), config) {
      plain.append(config)
    }
    // The fast path must carry the configs it exists for.
    for config in ["config.yaml", "Benchmarks/bench-config.yaml", "examples/uk-vat.yaml", "examples/jp-shop.yaml"] {
      #expect(plain.contains(config), "\(config) left the fast path")
    }
    #expect(plain.count >= 15, "only \(plain.count) of \(Self.configs.count) on the fast path: \(plain)")
  }

  @Test("hand-picked forms: what the fast path composes and what it leaves to libyaml")
  func forms() {
    let composed = [
      "a: 1\n", "a: b\nc: d\n", "a:\n  b: c\n", "a:\n- 1\n- 2\nb: 3\n", "a:\n  - x: 1\n    y: 2\n  - z\n",
      "a: [1, \"2\", '3', [4], {b: c}]\n", "a: {b: c, d: [e, f]}\n", "a: 'it''s'\n", "a: x # note\n# c\nb: y\n",
      "a: https://x.example/y?z=1#frag\n", "a: -4.5\nb: US-CA\n", "a: b, c\n", "a: Café\nb: {c: Ünï, d: 2}\n",
      "a: []\nb: {}\n", "a: 'x' # y\n", "a:b: c\n", "key with spaces  : v  \n", "a: x#y\n", "a: \"\"\n",
      "- a\n- b: c\n  d: e\n- [f]\n", "a: 1\na: 2\n", "a:\n  b: 1\n  b: 2\nc: 3\nc: 4\n", "- a:\n  - b\n",
      "- a:\n    b: 1\n", "a: ?x\nb: :y\n", "a: [-x, y-]\n", "a: \u{A0}x\n", "a: 中文\n",
    ]
    for text in composed {
      #expect(Self.check(text, text), "\(text) left the fast path")
    }
    let declined = [
      "", "# only\n", "a:\n", "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: |\n  text\n", "a: >\n  text\n",
      "a: long\n  text\n", "a: \"x\\ty\"\n", "a:\tb\n", "a: 1\r\n", "---\na: 1\n", "a: 1\n...\n", "%YAML 1.2\n---\na: 1\n",
      "\u{FEFF}a: 1\n", "a: [1,\n  2]\n", "a: [1, ]\n", "a: {b}\n", "? a\n: b\n", "\"a\": 1\n", "a: b: c\n",
      "a: 1\n  b: 2\n", "  a: 1\n", "a: x:\n", "a: [b: c]\n", "a: - b\n", "a: @x\n", "a: `x`\n", "scalar\n",
      "a:\n- b\n-c: d\n", "a: 'x\n  y'\n", "a: [x] y\n", "a: {b: c}#x\n", "a: [?x]\n", "a: {b: :c}\n",
      "a: x\u{2028}y\n", "a: x\u{85}y\n", "a: x\u{FEFF}\n", "a: \u{FFFF}\n", "a: x\u{9F}\n",
    ]
    // Nesting deeper than configs use goes to libyaml, which refuses more than 1,000 levels.
    let deepFlow = "a: " + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "\n"
    let deepBlock = (0..<40).map { String(repeating: " ", count: $0) + "k\($0):" }.joined(separator: "\n") + " 1\n"
    let tooDeep = "a: " + String(repeating: "[", count: 2_000) + String(repeating: "]", count: 2_000) + "\n"
    for text in declined + [deepFlow, deepBlock, tooDeep] {
      #expect(!Self.check(text, text), "\(text.debugDescription) should be left to libyaml")
    }
  }

  @Test("6,000 mutated configs: the fast path never answers differently from libyaml")
  func mutations() throws {
    let sources = try Self.configs.map { try Self.text($0) }
    let inserts = [":", " ", "  ", "-", "- ", "#", " #", "\"", "'", "[", "]", "{", "}", ",", "\n", "a", "&", "*",
      "|", ">", "?", "é", "\t", ": ", "\\", "!", "%"]
    var generator = SystemRandomNumberGenerator()
    var plain = 0
    var declined = 0
    for round in 0..<6_000 {
      var lines = sources.randomElement(using: &generator)!.split(separator: "\n", omittingEmptySubsequences: false)
        .map(String.init)
      for _ in 0..<Int.random(in: 1...3, using: &generator) {
        let index = Int.random(in: 0..<lines.count, using: &generator)
        switch Int.random(in: 0..<5, using: &generator) {
        case 0:
          var line = Array(lines[index])
          line.insert(
            contentsOf: inserts.randomElement(using: &generator)!, at: Int.random(in: 0...line.count, using: &generator))
          lines[index] = String(line)
        case 1:
          var line = Array(lines[index])
          if !line.isEmpty { line.remove(at: Int.random(in: 0..<line.count, using: &generator)) }
          lines[index] = String(line)
        case 2: lines.insert(lines[index], at: index)
        case 3: lines[index] = (Bool.random(using: &generator) ? "  " : "") + lines[index].dropFirst(Int.random(in: 0...2, using: &generator))
        default: lines.swapAt(index, Int.random(in: 0..<lines.count, using: &generator))
        }
      }
      let text = lines.joined(separator: "\n")
      if Self.check(text, "mutation \(round) \(text.debugDescription)") { plain += 1 } else { declined += 1 }
    }
    // Both sides must be exercised: mutated configs the fast path composes, and ones it leaves.
    #expect(plain > 1_000 && declined > 1_000, "plain \(plain), declined \(declined)")
  }
}
