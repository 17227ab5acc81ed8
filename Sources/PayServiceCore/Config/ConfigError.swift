/// Everything wrong with a config file, each problem with its place and field path.
public struct ConfigError: Error, CustomStringConvertible, Sendable {
  public struct Problem: Sendable, Equatable {
    public var file: String
    public var line: Int?
    public var column: Int?
    /// The field path, such as `catalog[0].price`; empty for the whole document.
    public var path: String
    public var message: String

    /// `config.yaml:12:5: catalog[0].price: must be ...`
    public var description: String {
      var place = file
      if let line { place += ":\(line)" }
      if let column { place += ":\(column)" }
      return path.isEmpty ? "\(place): \(message)" : "\(place): \(path): \(message)"
    }
  }

  public var problems: [Problem]

  public var description: String {
    problems.map(\.description).joined(separator: "\n")
  }
}
