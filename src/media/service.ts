// One media service per process: owns the mediasoup workers, their restarts and the registry.
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';

export class MediaService {
  private constructor(
    private readonly config: Config['media'],
    private readonly logger: Logger,
  ) {}

  static async create(config: Config['media'], logger: Logger): Promise<MediaService> {
    return new MediaService(config, logger);
  }

  aliveWorkerCount(): number {
    return 0;
  }

  async close(): Promise<void> {}
}
