/**
 * The one vocabulary of the answering: the detector's labels and the words people use for them,
 * categories of labels, colours (the palette the colour namer names, and the words people use for
 * those), words for people and for clothing, and numbers. The question reader, the fact plug-ins,
 * the colour answers and the wording rules all read these lists; none keeps a copy of its own.
 */
import { PALETTE, type ColourName } from '../analysis/stages/colours';

/** COCO classes the detector knows, with the words people use for them. */
export const LABEL_WORDS: Record<string, string[]> = {
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
export const CATEGORIES: Record<string, string[]> = {
  animal: ['bird', 'cat', 'dog', 'horse', 'sheep', 'cow', 'elephant', 'bear', 'zebra', 'giraffe'],
  animals: ['bird', 'cat', 'dog', 'horse', 'sheep', 'cow', 'elephant', 'bear', 'zebra', 'giraffe'],
  pet: ['cat', 'dog', 'bird'],
  vehicle: ['bicycle', 'car', 'motorcycle', 'airplane', 'bus', 'train', 'truck', 'boat'],
  vehicles: ['bicycle', 'car', 'motorcycle', 'airplane', 'bus', 'train', 'truck', 'boat'],
  electronic: ['tv', 'laptop', 'mouse', 'remote', 'keyboard', 'cell phone', 'microwave'],
  electronics: ['tv', 'laptop', 'mouse', 'remote', 'keyboard', 'cell phone', 'microwave'],
  gadget: ['laptop', 'cell phone', 'remote', 'keyboard', 'mouse'],
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

/** Words for a person (singular and plural): the person label's words, plus roles people are named by. */
export const PERSON_WORDS = [
  ...LABEL_WORDS.person!,
  'speaker',
  'speakers',
  'presenter',
  'presenters',
  'narrator',
  'host',
  'individual',
  'individuals',
  'visitor',
  'visitors',
  'face',
  'faces',
  'anyone',
  'anybody',
];

/** Words for clothing: a colour said with one of these describes what a person wears. */
export const CLOTHING_WORDS = [
  'jacket',
  'shirt',
  't-shirt',
  'sweater',
  'jumper',
  'hoodie',
  'top',
  'coat',
  'dress',
  'cardigan',
  'blouse',
  'clothes',
  'outfit',
  'hat',
  'cap',
  'trousers',
  'pants',
  'jeans',
  'skirt',
  'suit',
  'uniform',
  'scarf',
  'shoes',
];

/** Colour words people use → the palette name the colour namer (analysis/colours.ts) gives. */
export const COLOUR_WORDS: Record<string, ColourName> = {
  ...(Object.fromEntries(PALETTE.map((c) => [c, c])) as Record<string, ColourName>),
  violet: 'purple',
  gray: 'grey',
  silver: 'grey',
  gold: 'yellow',
  golden: 'yellow',
};

/** The colour a text names first (as a palette name), or null. */
export function colourNamed(text: string): ColourName | null {
  const m = new RegExp(`\\b(${Object.keys(COLOUR_WORDS).join('|')})\\b`, 'i').exec(text);
  return m ? COLOUR_WORDS[m[1]!.toLowerCase()]! : null;
}

/**
 * Words for kinds of answer the facts give themselves (a time, a number, a colour, a video, text,
 * a language, a shot...): "what colour", "which video", "at what point" ask for one of these, not
 * for a kind of thing a label would have to name.
 */
export const ANSWER_KINDS = new Set(
  'thing things object objects item items stuff colour colours color colors size shape time times number numbers amount video videos clip clips file files recording recordings footage film movie text texts word words writing title titles language languages kind sort type moment moments point points stage stages part parts second seconds minute minutes shot shots scene scenes frame frames picture image screen resolution codec format length duration sound audio name names way place overview summary description account recap synopsis outline rundown gist story'.split(
    ' ',
  ),
);

/** Answer kinds that are an attribute of another thing ("what colour is the mug"): that thing is the one asked about. */
export const ATTRIBUTE_WORDS = new Set('colour colours color colors size shape'.split(' '));

/**
 * Verbs of an activity or of making something ("what is the baby doing", "what is she cooking"):
 * what they ask for is no thing a detector's label names.
 */
export const ACTIVITY_VERBS = new Set(
  'doing making cooking celebrating playing preparing building eating drinking watching fixing baking singing dancing painting reading writing working do make cook celebrate prepare build bake'.split(
    ' ',
  ),
);

/**
 * Whether a noun is something the labels (or the facts) know: a label or a word people use for
 * one, a category of labels, a word for a person, or a kind of answer the facts give.
 */
export function knownThing(noun: string): boolean {
  const w = noun.toLowerCase();
  const one = w.replace(/s$/, '');
  return (
    labelsNamed(` ${w} `).length > 0 ||
    w in CATEGORIES ||
    one in CATEGORIES ||
    PERSON_WORDS.includes(w) ||
    ANSWER_KINDS.has(w) ||
    ANSWER_KINDS.has(one)
  );
}

/** Number words and the numbers they mean (the reader reads counts and durations with these). */
export const NUMBER_WORDS: Record<string, number> = {
  zero: 0,
  one: 1,
  single: 1,
  two: 2,
  both: 2,
  pair: 2,
  couple: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  fifteen: 15,
  twenty: 20,
  thirty: 30,
  sixty: 60,
};

/** The detector labels a text names, through the words people use for them ("puppy" → dog). */
export function labelsNamed(text: string): string[] {
  const q = ` ${text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}'\s-]/gu, ' ')
    .replace(/\s+/g, ' ')} `;
  const out: string[] = [];
  for (const [label, words] of Object.entries(LABEL_WORDS)) {
    // Every word for a person names the person label ("the first visitor", "the presenter").
    // "Is anyone there" asks about people too ("does anyone speak" is read as speech by the reader).
    const all = label === 'person' ? PERSON_WORDS : words;
    // A plural the list lacks ("remotes", "sheeps") still names the label.
    if (all.some((w) => q.includes(` ${w} `) || q.includes(` ${w}'s `) || q.includes(` ${w}s `))) out.push(label);
  }
  return out;
}

/** Whether a text names this label (by any of its words), as a whole word. */
export function namesLabel(text: string, label: string): boolean {
  return labelsNamed(text).includes(label) || new RegExp(`\\b${escapeRe(label)}s?\\b`, 'i').test(text);
}

/** Question words that name no thing: left out when the evidence is searched for what a question names. */
export const NAMES_NO_THING = new Set(
  'there any anything something video clip film footage recording scene shot screen frame picture visible see seen shown show shows showing appear appears appearing appeared present happen happens happening is are was were does do did can could when where which what who whom whose why how time times moment moments first last start end beginning ever at all doing going kind sort type thing things describe tell'.split(
    ' ',
  ),
);

export const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

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

const NUMBER_NAMES = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
export function numberWord(n: number): string {
  return NUMBER_NAMES[n] ?? String(n);
}

const COLOUR_BEFORE_PERSON = new RegExp(
  `\\b(${Object.keys(COLOUR_WORDS).join('|')})(\\s+|-)(${[...new Set(PERSON_WORDS)].map(escapeRe).join('|')})\\b`,
  'gi',
);

/** Whether a word is a word for a person. */
export const isPersonWord = (w: string) => PERSON_WORDS.includes(w.toLowerCase());

/**
 * The wording rule for colours: a colour describes clothing or things, never a person. "The black
 * person" becomes "the person in black". Quotes (what a caption or a speaker said) are left as they are.
 */
export function colourOnClothing(text: string): string {
  return text
    .split(/("[^"]*")/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(COLOUR_BEFORE_PERSON, (_m, c, _s, p) => `${p} in ${c}`)))
    .join('');
}

/** Whether a text puts a colour word directly before a word for a person (outside quotes). */
export function colourBeforePerson(text: string): boolean {
  return text.split(/"[^"]*"/).some((part) => new RegExp(COLOUR_BEFORE_PERSON.source, 'i').test(part));
}
