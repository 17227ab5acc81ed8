/// How many objects of a call over many had one effect: the summary a paged method answers beside
/// the items it lists, so that a caller adding up calls need not read every item.
public struct EffectCount<Effect: WireEnum & Hashable & Sendable>: Equatable, Sendable, WireObject {
  public var effect: Effect
  public var count = 0

  public static var shape: ObjectShape<EffectCount> {
    ObjectShape<EffectCount>(
      blank: { EffectCount(effect: Effect.allCases.first!) },
      [.member("effect", \.effect), .member("count", \.count, .required, .integer(minimum: 1))])
  }

  /// One count per effect that occurs in `effects`, in the order of the effect's cases.
  public static func counts(_ effects: some Sequence<Effect>) -> [EffectCount] {
    var counts: [Effect: Int] = [:]
    for effect in effects { counts[effect, default: 0] += 1 }
    return Effect.allCases.compactMap { effect in counts[effect].map { EffectCount(effect: effect, count: $0) } }
  }
}
