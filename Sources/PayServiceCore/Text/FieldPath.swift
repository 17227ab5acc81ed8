/// Field paths in messages for people: `items[2].quantity` in params, `shipping.methods[0].amount`
/// in config.
public enum FieldPath {
  /// `key` inside `path` (the top level when `path` is empty).
  public static func join(_ path: String, _ key: String) -> String {
    path.isEmpty ? key : "\(path).\(key)"
  }
}
