internal import CYaml

/// A composed YAML node: what the config reader needs of a YAML document (scalars with their text,
/// style and position; sequences; mappings in source order), built from libyaml's events, or by
/// `PlainYAML` from the bytes of the plain form most configs are written in (the same tree).
///
/// Tags are not resolved and no values are constructed: `YAMLFieldReader` reads every scalar from
/// its text, so an unquoted `price: 50.00` is the decimal 50.00 and never a binary float. Aliases
/// are replaced by the node their anchor names, as a composer does.
enum YAMLNode {
  case scalar(Scalar)
  case sequence(Sequence)
  case mapping(Mapping)

  /// Where a node starts, counted from 1 (columns in Unicode scalars, as libyaml counts them).
  struct Mark: Equatable {
    var line: Int
    var column: Int
  }

  struct Scalar {
    enum Style { case plain, singleQuoted, doubleQuoted, literal, folded }
    var string: String
    var style: Style
    var mark: Mark
  }

  struct Sequence: RandomAccessCollection {
    var nodes: [YAMLNode]
    var mark: Mark
    var startIndex: Int { nodes.startIndex }
    var endIndex: Int { nodes.endIndex }
    subscript(position: Int) -> YAMLNode { nodes[position] }
  }

  struct Mapping: RandomAccessCollection {
    var pairs: [(key: YAMLNode, value: YAMLNode)]
    var mark: Mark
    var startIndex: Int { pairs.startIndex }
    var endIndex: Int { pairs.endIndex }
    subscript(position: Int) -> (key: YAMLNode, value: YAMLNode) { pairs[position] }
  }

  var mark: Mark {
    switch self {
    case .scalar(let scalar): scalar.mark
    case .sequence(let sequence): sequence.mark
    case .mapping(let mapping): mapping.mark
    }
  }

  /// The text of a scalar; nil for a sequence or mapping.
  var string: String? {
    if case .scalar(let scalar) = self { return scalar.string }
    return nil
  }
}

/// Why a text is not one YAML document, as a config problem reads it ("invalid YAML: " and
/// libyaml's own problem text, or the duplicated keys), and where (nil for a problem in the bytes
/// themselves, before any position is known).
struct YAMLSyntaxError: Error, Equatable {
  var message: String
  var mark: YAMLNode.Mark?
}

extension YAMLNode {
  /// Composes the single document in `text`; nil for a stream with no document.
  ///
  /// A mapping that repeats a key is an error, named by its duplicated keys in sorted order at
  /// the first occurrence of the first of them; so is a second document, and an alias to an
  /// anchor not yet defined.
  ///
  /// The plain form most configs are written in is composed by `PlainYAML`, and anything else
  /// by libyaml; both give the same tree.
  static func compose(_ text: String) throws(YAMLSyntaxError) -> YAMLNode? {
    var text = text
    if let plain = text.withUTF8({ PlainYAML.compose($0) }) {
      if let repeated = plain.repeated { throw repeated }
      return plain.root
    }
    return try composeWithLibYAML(text)
  }

  /// What `PlainYAML` composes of `text` (repeated keys aside); nil when the text is not in the
  /// plain form. For the tests that hold it to libyaml's.
  static func composePlain(_ text: String) -> YAMLNode? {
    var text = text
    return text.withUTF8 { PlainYAML.compose($0) }?.root
  }

  /// What libyaml composes of `text`, repeated keys checked as each mapping ends.
  static func composeWithLibYAML(_ text: String) throws(YAMLSyntaxError) -> YAMLNode? {
    var text = text
    let result = text.withUTF8 { bytes in
      var composer = Composer()
      defer { composer.close() }
      return Result { () throws(YAMLSyntaxError) in try composer.document(bytes) }
    }
    return try result.get()
  }

  /// Scalar keys repeated in one mapping, each named by its first occurrence. Hashed: a generated
  /// mapping may hold tens of thousands of keys.
  static func checkDuplicates(_ pairs: [(key: YAMLNode, value: YAMLNode)]) throws(YAMLSyntaxError) {
    var seen = NameSet()
    var repeated = NameSet()
    for pair in pairs {
      if case .scalar(let key) = pair.key, !seen.insert(key.string) { _ = repeated.insert(key.string) }
    }
    var duplicated: [YAMLNode.Scalar] = []
    var named = NameSet()
    for pair in pairs {
      if case .scalar(let key) = pair.key, repeated.contains(key.string), named.insert(key.string) {
        duplicated.append(key)
      }
    }
    guard !duplicated.isEmpty else { return }
    duplicated.sort { $0.string < $1.string }
    throw YAMLSyntaxError(
      message: "duplicate key " + duplicated.map(\.string).joined(separator: ", "), mark: duplicated[0].mark)
  }
}

/// libyaml's parser, pulled one event at a time into nodes by recursive descent.
private struct Composer {
  private var parser = yaml_parser_t()
  private var anchors: [String: YAMLNode] = [:]
  private var open = false

  mutating func close() {
    if open { yaml_parser_delete(&parser) }
    open = false
  }

  mutating func document(_ bytes: UnsafeBufferPointer<UInt8>) throws(YAMLSyntaxError) -> YAMLNode? {
    guard let base = bytes.baseAddress, !bytes.isEmpty else { return nil }
    guard yaml_parser_initialize(&parser) == 1 else {
      throw YAMLSyntaxError(message: "invalid YAML: out of memory", mark: nil)
    }
    open = true
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
    yaml_parser_set_input_string(&parser, base, bytes.count)
    var start = try next()  // stream start
    yaml_event_delete(&start)
    var first = try next()
    defer { yaml_event_delete(&first) }
    guard first.type == YAML_DOCUMENT_START_EVENT else { return nil }
    var rootEvent = try next()
    let root = try node(from: &rootEvent)
    var end = try next()  // document end
    yaml_event_delete(&end)
    var after = try next()
    defer { yaml_event_delete(&after) }
    if after.type != YAML_STREAM_END_EVENT {
      throw YAMLSyntaxError(
        message: "invalid YAML: but found another document", mark: Self.mark(after.start_mark))
    }
    return root
  }

  private mutating func next() throws(YAMLSyntaxError) -> yaml_event_t {
    var event = yaml_event_t()
    guard yaml_parser_parse(&parser, &event) == 1 else {
      let problem = parser.problem.map { String(cString: $0) } ?? "unknown problem"
      let located = parser.error == YAML_SCANNER_ERROR || parser.error == YAML_PARSER_ERROR
      throw YAMLSyntaxError(message: "invalid YAML: " + problem, mark: located ? Self.mark(parser.problem_mark) : nil)
    }
    return event
  }

  private static func mark(_ mark: yaml_mark_t) -> YAMLNode.Mark {
    YAMLNode.Mark(line: Int(mark.line) + 1, column: Int(mark.column) + 1)
  }

  private static func text(_ bytes: UnsafeMutablePointer<yaml_char_t>?, count: Int) -> String {
    guard let bytes else { return "" }
    return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
  }

  private static func anchor(_ bytes: UnsafeMutablePointer<yaml_char_t>?) -> String? {
    bytes.map { String(cString: $0) }
  }

  /// The node `event` starts; consumes (and frees) `event` and every event of the node.
  private mutating func node(from event: inout yaml_event_t) throws(YAMLSyntaxError) -> YAMLNode {
    defer { yaml_event_delete(&event) }
    let mark = Self.mark(event.start_mark)
    switch event.type {
    case YAML_ALIAS_EVENT:
      guard let name = Self.anchor(event.data.alias.anchor), let target = anchors[name] else {
        throw YAMLSyntaxError(message: "invalid YAML: found undefined alias", mark: mark)
      }
      return target
    case YAML_SCALAR_EVENT:
      let scalar = event.data.scalar
      let style: YAMLNode.Scalar.Style =
        switch scalar.style {
        case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
        case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
        case YAML_LITERAL_SCALAR_STYLE: .literal
        case YAML_FOLDED_SCALAR_STYLE: .folded
        default: .plain
        }
      let node = YAMLNode.scalar(.init(string: Self.text(scalar.value, count: scalar.length), style: style, mark: mark))
      register(Self.anchor(scalar.anchor), node)
      return node
    case YAML_SEQUENCE_START_EVENT:
      let anchor = Self.anchor(event.data.sequence_start.anchor)
      var nodes: [YAMLNode] = []
      while true {
        var item = try next()
        if item.type == YAML_SEQUENCE_END_EVENT {
          yaml_event_delete(&item)
          break
        }
        nodes.append(try node(from: &item))
      }
      let node = YAMLNode.sequence(.init(nodes: nodes, mark: mark))
      register(anchor, node)
      return node
    case YAML_MAPPING_START_EVENT:
      let anchor = Self.anchor(event.data.mapping_start.anchor)
      var pairs: [(key: YAMLNode, value: YAMLNode)] = []
      while true {
        var keyEvent = try next()
        if keyEvent.type == YAML_MAPPING_END_EVENT {
          yaml_event_delete(&keyEvent)
          break
        }
        let key = try node(from: &keyEvent)
        var valueEvent = try next()
        pairs.append((key, try node(from: &valueEvent)))
      }
      try YAMLNode.checkDuplicates(pairs)
      let node = YAMLNode.mapping(.init(pairs: pairs, mark: mark))
      register(anchor, node)
      return node
    default:
      throw YAMLSyntaxError(message: "invalid YAML: unexpected event", mark: mark)
    }
  }

  private mutating func register(_ anchor: String?, _ node: YAMLNode) {
    // A later anchor of the same name shadows an earlier one, for the aliases after it.
    if let anchor { anchors[anchor] = node }
  }
}
