/**
 * What a question asks for, read from its wording: which kinds of evidence it needs (what is said,
 * written, seen, how many, when), which object classes it names, and its content words. Plain
 * rules over English, so the answer engine works without any generative model.
 */

export type Need = 'said' | 'written' | 'count' | 'when' | 'presence' | 'summary' | 'which_video' | 'what_object';

export interface Intent {
  needs: Set<Need>;
  /** Detector labels (COCO) the question names, through synonyms ("puppy" → dog). */
  labels: string[];
  /** Labels of a category the question asks about ("what animal" → every animal label). */
  categoryLabels: string[];
  /** Content words (lower case, no stop words), for keyword search. */
  keywords: string[];
  /** A number the question mentions ("two cars", "only one bottle"). */
  number: number | null;
  /** "first", "last", "beginning", "end": which part of the timeline is meant. */
  position: 'first' | 'last' | 'start' | 'end' | null;
  /** "largest number", "most", "maximum". */
  extreme: 'max' | 'min' | null;
}

/** COCO classes the detector knows, with the words people use for them. */
const LABEL_WORDS: Record<string, string[]> = {
  person: [
    'person',
    'people',
    'persons',
    'man',
    'men',
    'woman',
    'women',
    'someone',
    'somebody',
    'human',
    'humans',
    'boy',
    'girl',
    'child',
    'children',
    'kid',
    'kids',
    'baby',
    'guy',
    'lady',
    'player',
    'drummer',
    'pedestrian',
    'pedestrians',
  ],
  bicycle: ['bicycle', 'bicycles', 'bike', 'bikes'],
  car: ['car', 'cars', 'automobile', 'automobiles', 'vehicle', 'vehicles', 'sedan', 'suv'],
  motorcycle: ['motorcycle', 'motorcycles', 'motorbike', 'scooter'],
  airplane: ['airplane', 'airplanes', 'plane', 'planes', 'aircraft', 'jet'],
  bus: ['bus', 'buses'],
  train: ['train', 'trains'],
  truck: ['truck', 'trucks', 'lorry'],
  boat: ['boat', 'boats', 'ship', 'ships'],
  'traffic light': ['traffic light', 'traffic lights'],
  'stop sign': ['stop sign'],
  bench: ['bench', 'benches'],
  bird: ['bird', 'birds'],
  cat: ['cat', 'cats', 'kitten', 'kittens'],
  dog: ['dog', 'dogs', 'puppy', 'puppies', 'pup'],
  horse: ['horse', 'horses', 'pony'],
  sheep: ['sheep', 'lamb'],
  cow: ['cow', 'cows', 'cattle'],
  elephant: ['elephant', 'elephants'],
  bear: ['bear', 'bears'],
  zebra: ['zebra', 'zebras'],
  giraffe: ['giraffe', 'giraffes'],
  backpack: ['backpack', 'backpacks'],
  umbrella: ['umbrella', 'umbrellas'],
  handbag: ['handbag', 'handbags', 'purse', 'bag'],
  tie: ['tie', 'necktie'],
  suitcase: ['suitcase', 'suitcases', 'luggage'],
  frisbee: ['frisbee'],
  skis: ['ski', 'skis'],
  snowboard: ['snowboard'],
  'sports ball': ['ball', 'balls', 'football', 'soccer ball', 'basketball'],
  kite: ['kite', 'kites'],
  'baseball bat': ['baseball bat', 'bat'],
  skateboard: ['skateboard', 'skateboards', 'skate board'],
  surfboard: ['surfboard', 'surfboards'],
  'tennis racket': ['tennis racket', 'racket'],
  bottle: ['bottle', 'bottles'],
  'wine glass': ['wine glass', 'wine glasses'],
  cup: ['cup', 'cups', 'mug', 'mugs'],
  fork: ['fork', 'forks'],
  knife: ['knife', 'knives'],
  spoon: ['spoon', 'spoons'],
  bowl: ['bowl', 'bowls'],
  banana: ['banana', 'bananas'],
  apple: ['apple', 'apples'],
  sandwich: ['sandwich', 'sandwiches'],
  orange: ['orange', 'oranges'],
  pizza: ['pizza', 'pizzas'],
  donut: ['donut', 'donuts', 'doughnut'],
  cake: ['cake', 'cakes'],
  chair: ['chair', 'chairs', 'armchair', 'armchairs'],
  couch: ['couch', 'couches', 'sofa', 'sofas'],
  'potted plant': ['plant', 'plants', 'potted plant'],
  bed: ['bed', 'beds'],
  'dining table': ['table', 'tables', 'dining table', 'desk'],
  toilet: ['toilet'],
  // Not "screen": "on screen" is how people say visible.
  tv: ['tv', 'tvs', 'television', 'televisions', 'monitor'],
  laptop: ['laptop', 'laptops', 'notebook computer', 'computer'],
  mouse: ['computer mouse'],
  remote: ['remote', 'remote control'],
  keyboard: ['keyboard'],
  'cell phone': ['phone', 'phones', 'cell phone', 'smartphone', 'mobile phone'],
  microwave: ['microwave'],
  oven: ['oven', 'stove'],
  toaster: ['toaster'],
  sink: ['sink'],
  refrigerator: ['refrigerator', 'fridge'],
  book: ['book', 'books'],
  clock: ['clock', 'clocks'],
  vase: ['vase', 'vases'],
  scissors: ['scissors'],
  'teddy bear': ['teddy bear', 'teddy'],
  'hair drier': ['hair drier', 'hair dryer'],
  toothbrush: ['toothbrush'],
};

/** Categories a question can ask about ("what animal", "which vehicle", "what electronic device"). */
const CATEGORIES: Record<string, string[]> = {
  animal: ['bird', 'cat', 'dog', 'horse', 'sheep', 'cow', 'elephant', 'bear', 'zebra', 'giraffe'],
  animals: ['bird', 'cat', 'dog', 'horse', 'sheep', 'cow', 'elephant', 'bear', 'zebra', 'giraffe'],
  pet: ['cat', 'dog', 'bird'],
  vehicle: ['bicycle', 'car', 'motorcycle', 'airplane', 'bus', 'train', 'truck', 'boat'],
  vehicles: ['bicycle', 'car', 'motorcycle', 'airplane', 'bus', 'train', 'truck', 'boat'],
  electronic: ['tv', 'laptop', 'mouse', 'remote', 'keyboard', 'cell phone', 'microwave'],
  device: ['tv', 'laptop', 'mouse', 'remote', 'keyboard', 'cell phone'],
  devices: ['tv', 'laptop', 'mouse', 'remote', 'keyboard', 'cell phone'],
  furniture: ['chair', 'couch', 'bed', 'dining table', 'bench'],
  food: ['banana', 'apple', 'sandwich', 'orange', 'pizza', 'donut', 'cake'],
  drink: ['bottle', 'cup', 'wine glass'],
  sport: [
    'sports ball',
    'skateboard',
    'surfboard',
    'skis',
    'snowboard',
    'tennis racket',
    'baseball bat',
    'frisbee',
    'kite',
  ],
};

const STOP = new Set(
  'a an the is are was were be been being am do does did doing have has had of in on at to for from by with about into over under after before during between this that these those it its there here what which who whom whose when where why how many much any some no not only just than then so as or and but if also very can could would should will shall may might must i you he she we they me him her us them my your his our their video clip film movie footage scene shown show shows showing appear appears appearing visible seen see happen happens moment time point please tell say says said'.split(
    ' ',
  ),
);

const NUMBER_WORDS: Record<string, number> = {
  zero: 0,
  no: 0,
  one: 1,
  single: 1,
  two: 2,
  both: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
};

export function readIntent(question: string): Intent {
  const q = ` ${question
    .toLowerCase()
    .replace(/[^\p{L}\p{N}:;.'\s-]/gu, ' ')
    .replace(/\s+/g, ' ')} `;
  const has = (re: RegExp) => re.test(q);
  const needs = new Set<Need>();
  if (
    has(
      /\b(say|says|said|saying|speak|speaks|spoke|speaking|talk|talks|talking|mention|mentions|mentioned|tell|tells|told|ask|asks|asked|words?|quote|transcript|voice|speech|spoken|speaker|speakers|narrat\w*|request|requests|announce\w*|explain\w*)\b/,
    )
  )
    needs.add('said');
  if (
    has(
      /\b(written|write|writes|text|title|titles|caption|captions|subtitle\w*|sign|signs|label|labels|read|reads|displayed|display|displays|printed|timecode|counter|number shown|credits?|logo|banner|headline|letters?|presents?|name|names|named|on[- ]screen)\b/,
    )
  )
    needs.add('written');
  if (has(/\bhow many\b|\bnumber of\b|\bcount\b|\blargest number\b|\bhow much\b/)) needs.add('count');
  if (
    has(/\b(when|what time|timestamp|how long)\b|\b(which|what) (moments?|times?|points?|parts?|seconds?|minutes?)\b/)
  )
    needs.add('when');
  if (has(/^\s*(is|are|was|were|does|do|did|can|could)\b|\bis there\b|\bare there\b|\bany\b/)) needs.add('presence');
  if (
    has(
      /\b(summar\w+|what happens|what is happening|what's happening|overview|describe|description|sequence of events|going on)\b/,
    )
  )
    needs.add('summary');
  if (has(/\b(which|what) (video|videos|clip|clips|file|files|recording|recordings)\b/)) needs.add('which_video');

  const labels: string[] = [];
  for (const [label, words] of Object.entries(LABEL_WORDS)) {
    // A plural the list lacks ("remotes", "sheeps") still names the label.
    if (words.some((w) => q.includes(` ${w} `) || q.includes(` ${w}'s `) || q.includes(` ${w}s `))) labels.push(label);
  }
  const categoryLabels: string[] = [];
  for (const [word, members] of Object.entries(CATEGORIES)) {
    if (q.includes(` ${word} `)) for (const m of members) if (!categoryLabels.includes(m)) categoryLabels.push(m);
  }
  // "What electronic device ...", "which animals ...": a category asked about by name.
  if (categoryLabels.length && has(/\b(what|which)\b/)) needs.add('what_object');
  if (
    has(
      /\bwhat (animal|object|objects|thing|things|vehicle|device|devices|kind of|sort of|type of)\b|\bwhat (is|are|was|were) the \w+ (\w+ing|on|with|in|under|next to|beside)\b|\bwhat (objects|things) are\b/,
    )
  )
    needs.add('what_object');

  let number: number | null = null;
  const digit = /\b(\d{1,3})\b(?!:)/.exec(q.replace(/\d{1,2}:\d{2}(:\d{2})?/g, ' '));
  if (digit) number = Number(digit[1]);
  else
    for (const [w, n] of Object.entries(NUMBER_WORDS)) {
      if (w === 'no') continue;
      if (new RegExp(`\\b${w}\\b`).test(q)) {
        number = n;
        break;
      }
    }
  const position = has(/\b(first|earliest)\b/)
    ? 'first'
    : has(/\b(last|final|latest)\b/)
      ? 'last'
      : has(/\b(beginning|start|opening|begins)\b/)
        ? 'start'
        : has(/\b(end|ending|finish|closing)\b/)
          ? 'end'
          : null;
  const extreme = has(/\b(largest|most|maximum|max|greatest|highest|biggest)\b/)
    ? 'max'
    : has(/\b(fewest|least|minimum|smallest|lowest)\b/)
      ? 'min'
      : null;

  const keywords = [
    ...new Set(
      q
        .split(' ')
        .map((w) => w.replace(/^['.;:-]+|['.;:-]+$/g, ''))
        .filter((w) => w.length > 1 && !STOP.has(w)),
    ),
  ];
  return { needs, labels, categoryLabels, keywords, number, position, extreme };
}

/** Label as said in a sentence ("dining table" → "table", "tv" → "TV"). */
export function labelNoun(label: string, count = 1): string {
  const special: Record<string, [string, string]> = {
    person: ['person', 'people'],
    tv: ['TV', 'TVs'],
    'dining table': ['table', 'tables'],
    'sports ball': ['ball', 'balls'],
    'cell phone': ['phone', 'phones'],
    'potted plant': ['potted plant', 'potted plants'],
    mouse: ['computer mouse', 'computer mice'],
    skis: ['pair of skis', 'pairs of skis'],
    sheep: ['sheep', 'sheep'],
    knife: ['knife', 'knives'],
    bus: ['bus', 'buses'],
    couch: ['couch', 'couches'],
    'wine glass': ['wine glass', 'wine glasses'],
    sandwich: ['sandwich', 'sandwiches'],
    scissors: ['pair of scissors', 'pairs of scissors'],
  };
  const [one, many] = special[label] ?? [label, `${label}s`];
  return count === 1 ? one : many;
}

const NUMBERS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
export function numberWord(n: number): string {
  return NUMBERS[n] ?? String(n);
}
