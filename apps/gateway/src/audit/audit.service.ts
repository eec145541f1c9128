import { Injectable } from '@nestjs/common';
import { AuditFilter, AuditRepository } from '@app/persistence';
import { Page, toPage } from '../http/pagination';
import { AuditEventDto, mapAuditEvent } from './audit.dto';

/** The audit trail: every change made through the admin API, newest first. */
@Injectable()
export class AuditService {
  constructor(private readonly audit: AuditRepository) {}

  async list(filter: AuditFilter, limit: number, beforeId: number | null): Promise<Page<AuditEventDto>> {
    const rows = await this.audit.list(filter, limit + 1, beforeId);
    return toPage(rows, limit, mapAuditEvent);
  }
}
