import Foundation
import PayServiceCore

/// A JSON Schema draft-07 validator for the tests: enough of the dialect for the OpenRPC
/// meta-schema and for payservice's own schemas. Keywords it does not implement make validation
/// fail rather than pass silently.
///
/// `$ref`s into the schema itself (`#/definitions/…`) are followed. The one external reference the
/// OpenRPC meta-schema makes, `https://meta.json-schema.tools` (the JSON Schema meta-schema, not in
/// the package), is checked by `schemaProblems(_:at:)`: draft-07's rules for each keyword's value,
/// written out here.
public struct JSONSchemaValidator {
  public let root: JSONValue

  public init(schema: JSONValue) {
    root = schema
  }

  public init(file path: String) throws {
    root = try JSONParser.parse(try String(contentsOfFile: path, encoding: .utf8))
  }

  /// Every problem of `instance`, each as `path: what`; empty when it is valid.
  public func validate(_ instance: JSONValue) -> [String] {
    var problems: [String] = []
    check(instance, against: root, at: "$", into: &problems)
    return problems
  }

  /// Keywords that only annotate.
  static let annotations: Set<String> = [
    "$schema", "$id", "$comment", "title", "description", "default", "examples", "definitions", "format",
    "readOnly", "contentMediaType", "contentEncoding",
  ]

  private func check(_ instance: JSONValue, against schema: JSONValue, at path: String, into problems: inout [String]) {
    switch schema {
    case .bool(true): return
    case .bool(false):
      problems.append("\(path): no value is allowed here")
      return
    case .object(let keywords):
      if case .string(let reference)? = keywords["$ref"] {
        // In draft-07 a $ref's siblings are ignored.
        follow(reference, instance, at: path, into: &problems)
        return
      }
      for (keyword, value) in keywords.members {
        apply(keyword, value, keywords, instance, at: path, into: &problems)
      }
    default:
      problems.append("\(path): the schema is not an object or a boolean")
    }
  }

  private func follow(_ reference: String, _ instance: JSONValue, at path: String, into problems: inout [String]) {
    if reference.hasPrefix("https://meta.json-schema.tools") {
      if reference.hasSuffix("/properties/$ref") {
        if case .string = instance {} else { problems.append("\(path): a $ref must be a string") }
      } else {
        problems += Self.schemaProblems(instance, at: path)
      }
      return
    }
    guard reference.hasPrefix("#") else {
      problems.append("\(path): cannot resolve $ref \(reference)")
      return
    }
    var target = root
    for token in reference.dropFirst().split(separator: "/") {
      let name = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
      guard case .object(let object) = target, let next = object[name] else {
        problems.append("\(path): cannot resolve $ref \(reference)")
        return
      }
      target = next
    }
    check(instance, against: target, at: path, into: &problems)
  }

  private func apply(
    _ keyword: String, _ value: JSONValue, _ keywords: JSONObject, _ instance: JSONValue, at path: String,
    into problems: inout [String]
  ) {
    switch keyword {
    case "type":
      let types: [String]
      switch value {
      case .string(let type): types = [type]
      case .array(let list): types = list.compactMap { if case .string(let type) = $0 { type } else { nil } }
      default: types = []
      }
      if !types.contains(where: { Self.has(type: $0, instance) }) {
        problems.append("\(path): must be \(types.joined(separator: " or ")), got \(instance.kindName)")
      }
    case "enum":
      if case .array(let values) = value, !values.contains(where: { Self.equal($0, instance) }) {
        problems.append("\(path): must be one of \(JSONWriter.string(value))")
      }
    case "const":
      if !Self.equal(value, instance) { problems.append("\(path): must be \(JSONWriter.string(value))") }
    case "properties":
      guard case .object(let object) = instance, case .object(let properties) = value else { return }
      for (name, schema) in properties.members {
        if let member = object[name] { check(member, against: schema, at: "\(path).\(name)", into: &problems) }
      }
    case "patternProperties":
      guard case .object(let object) = instance, case .object(let patterns) = value else { return }
      for (pattern, schema) in patterns.members {
        for (name, member) in object.members where Self.matches(name, pattern) {
          check(member, against: schema, at: "\(path).\(name)", into: &problems)
        }
      }
    case "additionalProperties":
      guard case .object(let object) = instance else { return }
      var known: [String] = []
      if case .object(let properties)? = keywords["properties"] { known = properties.keys }
      var patterns: [String] = []
      if case .object(let patternProperties)? = keywords["patternProperties"] { patterns = patternProperties.keys }
      for (name, member) in object.members
      where !known.contains(name) && !patterns.contains(where: { Self.matches(name, $0) }) {
        check(member, against: value, at: "\(path).\(name)", into: &problems)
      }
    case "required":
      guard case .object(let object) = instance, case .array(let names) = value else { return }
      for case .string(let name) in names where !object.contains(name) {
        problems.append("\(path): \(name) is required")
      }
    case "items":
      guard case .array(let elements) = instance else { return }
      if case .array(let tuple) = value {
        for (index, element) in elements.enumerated() {
          let schema = index < tuple.count ? tuple[index] : (keywords["additionalItems"] ?? .bool(true))
          check(element, against: schema, at: "\(path)[\(index)]", into: &problems)
        }
      } else {
        for (index, element) in elements.enumerated() {
          check(element, against: value, at: "\(path)[\(index)]", into: &problems)
        }
      }
    case "additionalItems":
      return  // applied with items
    case "minItems", "maxItems":
      guard case .array(let elements) = instance, let bound = Self.integer(value) else { return }
      if keyword == "minItems" ? elements.count < bound : elements.count > bound {
        problems.append("\(path): \(keyword) \(bound), got \(elements.count) items")
      }
    case "uniqueItems":
      guard value == .bool(true), case .array(let elements) = instance else { return }
      for (index, element) in elements.enumerated() where elements[..<index].contains(where: { Self.equal($0, element) }) {
        problems.append("\(path)[\(index)]: repeats an earlier item")
      }
    case "minLength", "maxLength":
      guard case .string(let text) = instance, let bound = Self.integer(value) else { return }
      let length = text.unicodeScalars.count
      if keyword == "minLength" ? length < bound : length > bound {
        problems.append("\(path): \(keyword) \(bound), got \(length) characters")
      }
    case "pattern":
      guard case .string(let text) = instance, case .string(let pattern) = value else { return }
      if !Self.matches(text, pattern) { problems.append("\(path): \(JSONWriter.string(instance)) does not match \(pattern)") }
    case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
      guard case .number(let text) = instance, let number = Double(text), case .number(let boundText) = value,
        let bound = Double(boundText)
      else { return }
      let ok: Bool
      switch keyword {
      case "minimum": ok = number >= bound
      case "maximum": ok = number <= bound
      case "exclusiveMinimum": ok = number > bound
      default: ok = number < bound
      }
      if !ok { problems.append("\(path): \(keyword) \(boundText), got \(text)") }
    case "allOf", "anyOf", "oneOf":
      guard case .array(let schemas) = value else { return }
      let results = schemas.map { schema -> [String] in
        var nested: [String] = []
        check(instance, against: schema, at: path, into: &nested)
        return nested
      }
      let passed = results.filter(\.isEmpty).count
      switch keyword {
      case "allOf": problems += results.flatMap { $0 }
      case "anyOf":
        if passed == 0 {
          problems.append("\(path): matches none of anyOf (\(results.map { $0.first ?? "" }.joined(separator: "; ")))")
        }
      default:
        if passed != 1 {
          problems.append(
            "\(path): must match exactly one of oneOf, matches \(passed) (\(results.map { $0.first ?? "ok" }.joined(separator: "; ")))")
        }
      }
    case "not":
      var nested: [String] = []
      check(instance, against: value, at: path, into: &nested)
      if nested.isEmpty { problems.append("\(path): must not match \(JSONWriter.string(value))") }
    default:
      if !Self.annotations.contains(keyword) {
        problems.append("\(path): the validator does not implement \(keyword)")
      }
    }
  }

  static func has(type: String, _ instance: JSONValue) -> Bool {
    switch (type, instance) {
    case ("null", .null), ("boolean", .bool), ("number", .number), ("string", .string), ("array", .array),
      ("object", .object):
      return true
    case ("integer", .number(let text)):
      return Double(text).map { $0 == $0.rounded() } ?? false
    default:
      return false
    }
  }

  /// JSON equality, numbers by value.
  public static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
    if case .number(let x) = a, case .number(let y) = b { return Double(x) == Double(y) }
    if case .array(let x) = a, case .array(let y) = b {
      return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
    }
    if case .object(let x) = a, case .object(let y) = b {
      return x.members.count == y.members.count && x.members.allSatisfy { member in
        y[member.key].map { equal(member.value, $0) } ?? false
      }
    }
    return a == b
  }

  static func integer(_ value: JSONValue) -> Int? {
    if case .number(let text) = value { return Int(text) }
    return nil
  }

  static func matches(_ text: String, _ pattern: String) -> Bool {
    guard let regex = try? NSRegularExpression(pattern: pattern) else { return false }
    return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
  }

  // MARK: - draft-07 schemas

  static let schemaKeywords: Set<String> = [
    "$id", "$schema", "$ref", "$comment", "title", "description", "default", "readOnly", "examples", "multipleOf",
    "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern",
    "additionalItems", "items", "maxItems", "minItems", "uniqueItems", "contains", "maxProperties", "minProperties",
    "required", "additionalProperties", "definitions", "properties", "patternProperties", "dependencies",
    "propertyNames", "const", "enum", "type", "format", "contentMediaType", "contentEncoding", "if", "then", "else",
    "allOf", "anyOf", "oneOf", "not",
  ]
  static let simpleTypes: Set<String> = ["array", "boolean", "integer", "null", "number", "object", "string"]

  /// Why `value` is not a JSON Schema under draft-07's rules for each keyword's value; stricter in
  /// one way: a keyword draft-07 does not define is a problem (a typo would otherwise be ignored).
  public static func schemaProblems(_ value: JSONValue, at path: String) -> [String] {
    guard case .object(let keywords) = value else {
      return value.kindName == "a boolean" ? [] : ["\(path): a schema must be an object or a boolean"]
    }
    var problems: [String] = []
    func fail(_ keyword: String, _ message: String) { problems.append("\(path).\(keyword): \(message)") }
    func nonNegative(_ keyword: String, _ value: JSONValue) {
      if (integer(value) ?? -1) < 0 { fail(keyword, "must be a non-negative integer") }
    }
    func uniqueStrings(_ keyword: String, _ value: JSONValue, nonEmpty: Bool) {
      guard case .array(let list) = value, list.allSatisfy({ if case .string = $0 { true } else { false } }),
        Set(list.map { JSONWriter.string($0) }).count == list.count, !nonEmpty || !list.isEmpty
      else { return fail(keyword, "must be an array of unique strings") }
    }
    for (keyword, member) in keywords.members {
      let memberPath = "\(path).\(keyword)"
      switch keyword {
      case _ where !schemaKeywords.contains(keyword):
        fail(keyword, "is not a draft-07 keyword")
      case "$id", "$schema", "$ref", "$comment", "title", "description", "format", "contentMediaType", "contentEncoding":
        if case .string = member {} else { fail(keyword, "must be a string") }
      case "readOnly", "uniqueItems":
        if case .bool = member {} else { fail(keyword, "must be a boolean") }
      case "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum":
        if case .number = member {} else { fail(keyword, "must be a number") }
      case "maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties":
        nonNegative(keyword, member)
      case "pattern":
        if case .string(let pattern) = member, (try? NSRegularExpression(pattern: pattern)) != nil {} else {
          fail(keyword, "must be a regular expression")
        }
      case "additionalItems", "contains", "additionalProperties", "propertyNames", "if", "then", "else", "not":
        problems += schemaProblems(member, at: memberPath)
      case "items":
        if case .array(let schemas) = member {
          for (index, schema) in schemas.enumerated() { problems += schemaProblems(schema, at: "\(memberPath)[\(index)]") }
        } else {
          problems += schemaProblems(member, at: memberPath)
        }
      case "definitions", "properties", "patternProperties":
        guard case .object(let schemas) = member else {
          fail(keyword, "must be an object of schemas")
          continue
        }
        for (name, schema) in schemas.members {
          if keyword == "patternProperties" && (try? NSRegularExpression(pattern: name)) == nil {
            fail(keyword, "\(name) is not a regular expression")
          }
          problems += schemaProblems(schema, at: "\(memberPath).\(name)")
        }
      case "required":
        uniqueStrings(keyword, member, nonEmpty: false)
      case "enum":
        guard case .array(let values) = member, !values.isEmpty,
          Set(values.map { JSONWriter.string($0) }).count == values.count
        else {
          fail(keyword, "must be a non-empty array of unique values")
          continue
        }
      case "type":
        if case .string(let type) = member {
          if !simpleTypes.contains(type) { fail(keyword, "\(type) is not a JSON Schema type") }
        } else {
          uniqueStrings(keyword, member, nonEmpty: true)
          if case .array(let types) = member {
            for case .string(let type) in types where !simpleTypes.contains(type) {
              fail(keyword, "\(type) is not a JSON Schema type")
            }
          }
        }
      case "allOf", "anyOf", "oneOf":
        guard case .array(let schemas) = member, !schemas.isEmpty else {
          fail(keyword, "must be a non-empty array of schemas")
          continue
        }
        for (index, schema) in schemas.enumerated() { problems += schemaProblems(schema, at: "\(memberPath)[\(index)]") }
      case "dependencies":
        guard case .object(let dependencies) = member else {
          fail(keyword, "must be an object")
          continue
        }
        for (name, dependency) in dependencies.members {
          if case .array = dependency { uniqueStrings("\(keyword).\(name)", dependency, nonEmpty: false) } else {
            problems += schemaProblems(dependency, at: "\(memberPath).\(name)")
          }
        }
      default:
        break  // default, examples, const: any value
      }
    }
    return problems
  }
}
