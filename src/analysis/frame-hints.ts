/**
 * What one stage of a group learnt about a sampled frame that another stage of the group may use to
 * skip work: the objects stage tells, per frame, whether a person may be in it; the faces stage
 * then leaves the face models off frames where no person can be (issue 35). A stage that asks
 * about a frame no stage of its group will tell about gets `undefined` (and does the work).
 */
export class FrameHints {
  private readonly persons = new Map<number, boolean>();
  private readonly waiting = new Map<number, ((maybe: boolean | undefined) => void)[]>();
  private open: boolean;

  /** `told`: a stage of the group tells about persons (Analyzer.tellsPersons). */
  constructor(told: boolean) {
    this.open = told;
  }

  /** Whether a person may be in the frame at `t` (its time in the video). */
  setPerson(t: number, maybe: boolean): void {
    if (!this.open) return;
    this.persons.set(t, maybe);
    const w = this.waiting.get(t);
    this.waiting.delete(t);
    for (const resolve of w ?? []) resolve(maybe);
  }

  /** Waits for the telling stage's word on the frame at `t`; `undefined` when it will not come. */
  person(t: number): Promise<boolean | undefined> {
    const known = this.persons.get(t);
    if (known !== undefined || !this.open) return Promise.resolve(known);
    return new Promise((resolve) => {
      const w = this.waiting.get(t);
      if (w) w.push(resolve);
      else this.waiting.set(t, [resolve]);
    });
  }

  /** The telling stage is done (or failed): whoever still waits does the work. */
  close(): void {
    this.open = false;
    for (const w of this.waiting.values()) for (const resolve of w) resolve(undefined);
    this.waiting.clear();
  }
}
