import { Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { AuditController } from './audit.controller';
import { AuditService } from './audit.service';

@Module({ imports: [DatabaseModule], controllers: [AuditController], providers: [AuditService] })
export class AuditModule {}
