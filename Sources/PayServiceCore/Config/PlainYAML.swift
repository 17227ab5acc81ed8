/// Composes the plain form most config files are written in, straight from the text's bytes:
/// block mappings and block sequences (compact mappings in entries too), flow sequences and flow
/// mappings on one line, plain scalars on one line, and quoted scalars on one line without
/// escapes; with comments and blank lines anywhere.
///
/// It is a fast path, not a second YAML reader. It returns nil as soon as it meets anything else
/// (an anchor, alias or tag, a block or multi-line scalar, an escape, a tab, an empty value, a
/// document marker, a key that is not a plain name, or any layout it does not expect), and
/// libyaml then composes the whole text, errors included. What it does return is the node tree
/// libyaml composes from the same text, marks included, and the first mapping that repeats a key
/// in the order libyaml's composition ends mappings (inner ones first), with libyaml's message.
/// Tests hold the two to that on the project's configs and on generated variants of them.
///
/// libyaml's composition takes some 780,000 instructions for a 2 KB config, this a third of that:
/// the config was a quarter of a one-request start.
struct PlainYAML {
  private struct Line {
    var start: Int
    var end: Int
    /// Where the content starts (after the indentation), `end` for a blank line.
    var content: Int
    var number: Int
    /// Whether every byte is ASCII: columns are then byte offsets.
    var ascii: Bool
  }

  private let bytes: UnsafeBufferPointer<UInt8>
  /// The lines with content (not blank, not only a comment).
  private var lines: [Line] = []
  /// The first mapping's repeated keys, as `YAMLNode.checkDuplicates` names them.
  private var repeated: YAMLSyntaxError?
  /// The keys of the mapping being checked (kept to spare an allocation per mapping).
  private var keys = NameSet()
  /// How many collections are open; deeper nesting than configs use is left to libyaml, which
  /// refuses more than 1,000 levels (so no text can exhaust the stack here).
  private var depth = 0
  private static let maxDepth = 32

  private init(_ bytes: UnsafeBufferPointer<UInt8>) {
    self.bytes = bytes
  }

  /// The document in `bytes` and the first repeat of a key in it, or nil when the text is not in
  /// the plain form.
  static func compose(_ bytes: UnsafeBufferPointer<UInt8>) -> (root: YAMLNode, repeated: YAMLSyntaxError?)? {
    var reader = PlainYAML(bytes)
    guard reader.split() else { return nil }
    guard !reader.lines.isEmpty else { return nil }
    let first = reader.lines[0]
    guard first.content == first.start, let (root, next) = reader.block(line: 0, at: first.content),
      next == reader.lines.count
    else { return nil }
    return (root, reader.repeated)
  }

  /// Notes the first mapping (as mappings end) that repeats a key.
  private mutating func checkRepeats(_ pairs: [(key: YAMLNode, value: YAMLNode)]) {
    guard repeated == nil else { return }
    keys.removeAll()
    for pair in pairs {
      guard case .scalar(let key) = pair.key else { continue }
      if !keys.insert(key.string) {
        do throws(YAMLSyntaxError) { try YAMLNode.checkDuplicates(pairs) } catch { repeated = error }
        return
      }
    }
  }

  // MARK: Lines

  private static let space = UInt8(ascii: " ")
  private static let newline = UInt8(ascii: "\n")
  private static let hash = UInt8(ascii: "#")

  /// Splits the text into content lines; false for what the plain form leaves to libyaml
  /// anywhere: tabs, carriage returns, a byte-order mark, control characters, document markers
  /// and directives.
  private mutating func split() -> Bool {
    var start = 0
    var number = 1
    while start < bytes.count {
      var end = start
      var ascii = true
      while end < bytes.count && bytes[end] != Self.newline {
        let byte = bytes[end]
        // Tabs, CR and other controls (and DEL) are for libyaml to accept or refuse.
        if byte < 0x20 || byte == 0x7F { return false }
        if byte >= 0x80 {
          guard isPlainUnicode(end) else { return false }
          ascii = false
        }
        end += 1
      }
      var content = start
      while content < end && bytes[content] == Self.space { content += 1 }
      if content < end && bytes[content] != Self.hash {
        if content == start {
          let rest = end - start
          let three = rest >= 3 ? (bytes[start], bytes[start + 1], bytes[start + 2]) : (0, 0, 0)
          if three == (0x2D, 0x2D, 0x2D) || three == (0x2E, 0x2E, 0x2E) || bytes[start] == UInt8(ascii: "%") {
            return false
          }
          if bytes[start] == 0xEF { return false }  // a byte-order mark
        }
        lines.append(Line(start: start, end: end, content: content, number: number, ascii: ascii))
      }
      start = end + 1
      number += 1
    }
    return true
  }

  /// Whether the UTF-8 sequence at `offset` (or the continuation byte there) is one libyaml reads
  /// as an ordinary character: not a C1 control (U+0080-U+009F, NEL among them), not the line
  /// and paragraph separators U+2028 and U+2029 (line breaks to YAML 1.1), not a byte-order mark,
  /// U+FFFE or U+FFFF.
  private func isPlainUnicode(_ offset: Int) -> Bool {
    let byte = bytes[offset]
    guard byte & 0xC0 != 0x80 else { return true }
    let second = offset + 1 < bytes.count ? bytes[offset + 1] : 0
    let third = offset + 2 < bytes.count ? bytes[offset + 2] : 0
    switch byte {
    case 0xC2: return second >= 0xA0
    case 0xE2: return !(second == 0x80 && (third == 0xA8 || third == 0xA9))
    case 0xEF: return !(second == 0xBB && third == 0xBF) && !(second == 0xBF && (third == 0xBE || third == 0xBF))
    default: return true
    }
  }

  /// The mark of the byte at `offset` of `line`: columns count Unicode scalars, as libyaml's do.
  private func mark(_ line: Line, _ offset: Int) -> YAMLNode.Mark {
    if line.ascii { return YAMLNode.Mark(line: line.number, column: offset - line.start + 1) }
    var column = 1
    var at = line.start
    while at < offset {
      if bytes[at] & 0xC0 != 0x80 { column += 1 }
      at += 1
    }
    return YAMLNode.Mark(line: line.number, column: column)
  }

  private func indent(_ line: Line) -> Int { line.content - line.start }

  // MARK: Block context

  /// The block node starting at `offset` of line `index`: a sequence, or a mapping. Returns it
  /// and the index of the first line after it.
  private mutating func block(line index: Int, at offset: Int) -> (YAMLNode, Int)? {
    if isEntry(lines[index], offset) { return sequence(line: index, at: offset) }
    if keyEnd(lines[index], offset) != nil { return mapping(line: index, at: offset) }
    return nil
  }

  /// "-" followed by a space (an entry with content on its line).
  private func isEntry(_ line: Line, _ offset: Int) -> Bool {
    offset + 1 < line.end && bytes[offset] == UInt8(ascii: "-") && bytes[offset + 1] == Self.space
  }

  private mutating func sequence(line first: Int, at offset: Int) -> (YAMLNode, Int)? {
    depth += 1
    defer { depth -= 1 }
    guard depth <= Self.maxDepth else { return nil }
    let column = offset - lines[first].start
    var nodes: [YAMLNode] = []
    var index = first
    var at = offset
    while true {
      let line = lines[index]
      var content = at + 2
      while content < line.end && bytes[content] == Self.space { content += 1 }
      guard content < line.end, bytes[content] != Self.hash else { return nil }
      let node: YAMLNode
      if keyEnd(line, content) != nil {
        guard let (entry, next) = mapping(line: index, at: content) else { return nil }
        node = entry
        index = next
      } else {
        guard let entry = inline(line, content) else { return nil }
        node = entry
        index += 1
        if index < lines.count && indent(lines[index]) > column { return nil }
      }
      nodes.append(node)
      guard index < lines.count else { break }
      let next = lines[index]
      let nextIndent = indent(next)
      if nextIndent > column { return nil }
      if nextIndent < column || !isEntry(next, next.content) {
        // The sequence ends; a line at its own indentation must then be its parent's next key.
        if nextIndent == column && bytes[next.content] == UInt8(ascii: "-") { return nil }
        break
      }
      at = next.content
    }
    return (.sequence(.init(nodes: nodes, mark: mark(lines[first], offset))), index)
  }

  private mutating func mapping(line first: Int, at offset: Int) -> (YAMLNode, Int)? {
    depth += 1
    defer { depth -= 1 }
    guard depth <= Self.maxDepth else { return nil }
    let column = offset - lines[first].start
    var pairs: [(key: YAMLNode, value: YAMLNode)] = []
    var index = first
    var at = offset
    while true {
      let line = lines[index]
      guard let colon = keyEnd(line, at) else { return nil }
      let key = YAMLNode.scalar(.init(string: text(at, trimming(at, colon)), style: .plain, mark: mark(line, at)))
      var content = colon + 1
      while content < line.end && bytes[content] == Self.space { content += 1 }
      let value: YAMLNode
      if content == line.end || bytes[content] == Self.hash {
        // The value is the block on the next lines: more indented, or a sequence at this
        // indentation. Anything else (an empty value) is left to libyaml.
        let below = index + 1
        guard below < lines.count else { return nil }
        let next = lines[below]
        if indent(next) > column {
          guard let (node, after) = block(line: below, at: next.content) else { return nil }
          value = node
          index = after
        } else if indent(next) == column && isEntry(next, next.content) {
          guard let (node, after) = sequence(line: below, at: next.content) else { return nil }
          value = node
          index = after
        } else {
          return nil
        }
      } else {
        guard let node = inline(line, content) else { return nil }
        value = node
        index += 1
        if index < lines.count && indent(lines[index]) > column { return nil }
      }
      pairs.append((key, value))
      guard index < lines.count else { break }
      let next = lines[index]
      let nextIndent = indent(next)
      if nextIndent > column { return nil }
      if nextIndent < column { break }
      // The same indentation: the next key of this mapping (or, for a compact mapping in a
      // sequence entry, never an entry of that sequence, which is less indented).
      guard keyEnd(next, next.content) != nil else { return nil }
      at = next.content
    }
    checkRepeats(pairs)
    return (.mapping(.init(pairs: pairs, mark: mark(lines[first], offset))), index)
  }

  /// The offset of the ":" ending a plain key that starts at `offset` (followed by a space or
  /// the end of the line); nil when the line does not start a key there.
  private func keyEnd(_ line: Line, _ offset: Int) -> Int? {
    guard offset < line.end, startsPlain(offset, line.end, flow: false) else { return nil }
    var at = offset
    while at < line.end {
      let byte = bytes[at]
      if byte == UInt8(ascii: ":") && (at + 1 == line.end || bytes[at + 1] == Self.space) {
        // libyaml limits a simple key to 1024 characters; leave long ones to it.
        return at - offset <= 1000 ? at : nil
      }
      if byte == Self.hash && bytes[at - 1] == Self.space { return nil }
      if isFlowIndicator(byte) || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") { return nil }
      at += 1
    }
    return nil
  }

  /// The node filling the rest of `line` from `offset`: a flow collection, a quoted scalar or a
  /// plain scalar, followed by nothing but spaces and a comment.
  private mutating func inline(_ line: Line, _ offset: Int) -> YAMLNode? {
    var at = offset
    let node: YAMLNode
    switch bytes[offset] {
    case UInt8(ascii: "["), UInt8(ascii: "{"):
      guard let (flowNode, end) = flow(line, offset) else { return nil }
      node = flowNode
      at = end
    case UInt8(ascii: "\""), UInt8(ascii: "'"):
      guard let (scalar, end) = quoted(line, offset) else { return nil }
      node = scalar
      at = end
    default:
      guard startsPlain(offset, line.end, flow: false) else { return nil }
      var end = offset
      while end < line.end {
        let byte = bytes[end]
        if byte == Self.hash && bytes[end - 1] == Self.space { break }
        // A ": " inside would start a mapping on this line: libyaml refuses that.
        if byte == UInt8(ascii: ":") && (end + 1 == line.end || bytes[end + 1] == Self.space) { return nil }
        end += 1
      }
      return .scalar(.init(string: text(offset, trimming(offset, end)), style: .plain, mark: mark(line, offset)))
    }
    while at < line.end && bytes[at] == Self.space { at += 1 }
    guard at == line.end || (bytes[at] == Self.hash && bytes[at - 1] == Self.space) else { return nil }
    return node
  }

  // MARK: Flow context (one line)

  private func isFlowIndicator(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: ",") || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]")
      || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "}")
  }

  /// A flow sequence or mapping starting at `offset` and closed on the same line; returns it and
  /// the offset after its closing bracket.
  private mutating func flow(_ line: Line, _ offset: Int) -> (YAMLNode, Int)? {
    depth += 1
    defer { depth -= 1 }
    guard depth <= Self.maxDepth else { return nil }
    let isMapping = bytes[offset] == UInt8(ascii: "{")
    let close = isMapping ? UInt8(ascii: "}") : UInt8(ascii: "]")
    var nodes: [YAMLNode] = []
    var pairs: [(key: YAMLNode, value: YAMLNode)] = []
    var at = skipSpaces(line, offset + 1)
    if at < line.end && bytes[at] == close {
      at += 1
    } else {
      while true {
        guard at < line.end else { return nil }
        if isMapping {
          guard let (key, colon) = flowPlain(line, at, key: true), colon < line.end,
            bytes[colon] == UInt8(ascii: ":"), colon + 1 < line.end, bytes[colon + 1] == Self.space
          else { return nil }
          let valueStart = skipSpaces(line, colon + 1)
          guard valueStart < line.end, let (value, end) = flowNode(line, valueStart) else { return nil }
          pairs.append((key, value))
          at = end
        } else {
          guard let (node, end) = flowNode(line, at) else { return nil }
          nodes.append(node)
          at = end
        }
        at = skipSpaces(line, at)
        guard at < line.end else { return nil }
        if bytes[at] == close {
          at += 1
          break
        }
        guard bytes[at] == UInt8(ascii: ",") else { return nil }
        at = skipSpaces(line, at + 1)
        // A trailing comma, or an empty entry: libyaml's to judge.
        guard at < line.end, bytes[at] != close, bytes[at] != UInt8(ascii: ",") else { return nil }
      }
    }
    let where_ = mark(line, offset)
    if isMapping { checkRepeats(pairs) }
    return isMapping
      ? (.mapping(.init(pairs: pairs, mark: where_)), at) : (.sequence(.init(nodes: nodes, mark: where_)), at)
  }

  private mutating func flowNode(_ line: Line, _ offset: Int) -> (YAMLNode, Int)? {
    switch bytes[offset] {
    case UInt8(ascii: "["), UInt8(ascii: "{"): return flow(line, offset)
    case UInt8(ascii: "\""), UInt8(ascii: "'"): return quoted(line, offset)
    default: return flowPlain(line, offset, key: false)
    }
  }

  /// A plain scalar in a flow collection: it ends at a flow indicator, at ": " (or ":" before an
  /// indicator), or at " #".
  private func flowPlain(_ line: Line, _ offset: Int, key: Bool) -> (YAMLNode, Int)? {
    guard startsPlain(offset, line.end, flow: true) else { return nil }
    var end = offset
    while end < line.end {
      let byte = bytes[end]
      if isFlowIndicator(byte) { break }
      if byte == UInt8(ascii: ":") && (end + 1 == line.end || bytes[end + 1] == Self.space || isFlowIndicator(bytes[end + 1])) {
        // In a sequence a ":" there would make a single-pair mapping: libyaml's to compose.
        if !key { return nil }
        break
      }
      if byte == Self.hash && bytes[end - 1] == Self.space { return nil }
      if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") { return nil }
      end += 1
    }
    let trimmed = trimming(offset, end)
    guard trimmed > offset else { return nil }
    return (.scalar(.init(string: text(offset, trimmed), style: .plain, mark: mark(line, offset))), end)
  }

  // MARK: Scalars

  /// Whether a plain scalar may start at `offset`: not with an indicator, except "-" followed by
  /// a character that is not a space (nor, in flow context, an indicator), and "?" and ":" so
  /// followed in block context (libyaml reads them as indicators anywhere in flow context).
  private func startsPlain(_ offset: Int, _ end: Int, flow: Bool) -> Bool {
    let byte = bytes[offset]
    switch byte {
    case UInt8(ascii: "-"), UInt8(ascii: "?"), UInt8(ascii: ":"):
      guard offset + 1 < end, byte == UInt8(ascii: "-") || !flow else { return false }
      let next = bytes[offset + 1]
      return next != Self.space && !(flow && isFlowIndicator(next))
    case UInt8(ascii: ","), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}"),
      UInt8(ascii: "#"), UInt8(ascii: "&"), UInt8(ascii: "*"), UInt8(ascii: "!"), UInt8(ascii: "|"),
      UInt8(ascii: ">"), UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "%"), UInt8(ascii: "@"),
      UInt8(ascii: "`"), Self.space:
      return false
    default:
      return true
    }
  }

  /// A quoted scalar closed on its line, without escapes (a doubled quote in single quotes is
  /// one quote); returns it and the offset after its closing quote.
  private func quoted(_ line: Line, _ offset: Int) -> (YAMLNode, Int)? {
    let quote = bytes[offset]
    let single = quote == UInt8(ascii: "'")
    var doubled = false
    var at = offset + 1
    while true {
      guard at < line.end else { return nil }
      let byte = bytes[at]
      if byte == quote {
        guard single && at + 1 < line.end && bytes[at + 1] == quote else { break }
        doubled = true
        at += 2
        continue
      }
      if !single && byte == UInt8(ascii: "\\") { return nil }
      at += 1
    }
    var string = text(offset + 1, at)
    if doubled { string = string.replacing("''", with: "'") }
    let scalar = YAMLNode.Scalar(string: string, style: single ? .singleQuoted : .doubleQuoted, mark: mark(line, offset))
    return (.scalar(scalar), at + 1)
  }

  private func skipSpaces(_ line: Line, _ offset: Int) -> Int {
    var at = offset
    while at < line.end && bytes[at] == Self.space { at += 1 }
    return at
  }

  /// `end` with the spaces before it removed.
  private func trimming(_ start: Int, _ end: Int) -> Int {
    var end = end
    while end > start && bytes[end - 1] == Self.space { end -= 1 }
    return end
  }

  private func text(_ start: Int, _ end: Int) -> String {
    String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
  }
}
