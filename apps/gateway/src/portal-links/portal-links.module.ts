import { Module } from '@nestjs/common';
import { DatabaseModule } from '@app/persistence';
import { PortalLinksController } from './portal-links.controller';
import { PortalLinksService } from './portal-links.service';

@Module({ imports: [DatabaseModule], controllers: [PortalLinksController], providers: [PortalLinksService] })
export class PortalLinksModule {}
